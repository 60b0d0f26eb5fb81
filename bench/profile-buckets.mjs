// node bench/profile-buckets.mjs <file.cpuprofile> [runs]: a bench:server profile (PROFILE=<file>) as time per part
// of Charter (and per run when the run count is given). Each sample goes to the innermost frame that matches one of
// the patterns below (the first pattern wins on a frame), so a part's time excludes the parts it calls.
import { readFileSync } from "node:fs";

const profile = JSON.parse(readFileSync(process.argv[2], "utf8"));
const buckets = [
  ["configuration (load or cache)", /loadConfiguration dist|configuration-cache/],
  ["transcript files (jsonl writer)", /jsonl-transcript-writer/],
  ["lifecycle events (appendRunEvent)", /appendRunEvent|run-event-access/],
  ["store writes (writeBatch/checkpoint)", /create-kysely-run-store|write-commit-batch|durable-run-hooks/],
  ["store other", /dist\/store\//],
  ["model client create (ai-sdk schemas)", /createChatModel|createModelClient|openAICompatibleAdapter/],
  ["model call (ai-sdk doGenerate)", /doGenerate/],
  ["token counting", /token-estimator/],
  ["contract build/hash", /buildExecutionContract|computeContractHash|contract-factory/],
  ["hash chain transcript", /hash-chain-transcript|content-hash/],
  ["canonical json", /canonical-json/],
  ["redaction", /secret-redactor|redact/],
  ["prepare agent", /prepare-agent|load-agent-setup|loadTopLevelAgent/],
  ["tool call (rest)", /rest-tool-source|run-tool-call|live-tool-executor/],
  ["session", /dist\/session\//],
  ["runner", /dist\/runner\//],
  ["server http", /dist\/server\/http|fastify|avvio|find-my-way/],
  ["server execution", /dist\/server\//],
  ["bench client / scripted servers", /bench\/|dist\/testing\//],
  ["garbage collector", /^\(garbage collector\)/],
  ["idle/program", /^\((idle|program)\)/],
];
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const short = (url) => url.replace(/^file:\/\/.*?\/(node_modules|dist|bench)\//, "$1/");
const label = (n) =>
  `${n.callFrame.functionName || "(anon)"} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const by = new Map();
let total = 0;
const memo = new Map();
function bucketOf(id) {
  if (memo.has(id)) return memo.get(id);
  let result = "other (node internals, undici, microtasks)";
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(nodes.get(cur));
    const hit = buckets.find(([, re]) => re.test(l));
    if (hit) {
      result = hit[0];
      break;
    }
  }
  memo.set(id, result);
  return result;
}
for (let i = 0; i < profile.samples.length; i++) {
  const t = profile.timeDeltas[i] ?? 0;
  total += t;
  const b = bucketOf(profile.samples[i]);
  by.set(b, (by.get(b) ?? 0) + t);
}
const runs = Number(process.argv[3] ?? 0);
console.log(
  `total ${(total / 1e6).toFixed(2)} s${runs ? `, ${(total / 1e3 / runs).toFixed(1)} ms per run` : ""}`,
);
for (const [k, v] of [...by].sort((a, b) => b[1] - a[1]))
  console.log(
    `${(v / 1e3).toFixed(0).padStart(7)} ms ${((100 * v) / total).toFixed(1).padStart(5)}%${runs ? ` ${(v / 1e3 / runs).toFixed(2).padStart(6)} ms/run` : ""}  ${k}`,
  );
