// npm run bench:startup: what a whole `charter` process costs from start to exit, beside `node -e 0` in the same
// run. Every command is started REPEATS times (at least 10), interleaved round by round so that a slow phase of
// this shared machine affects every command alike; the medians of wall time and peak memory (from GNU time's
// maximum resident set size when /usr/bin/time exists) are printed with their ratios to `node -e 0`.
//
// Commands: `charter --version`, `charter --help`, and `charter run` of a one-turn agent with no tools against a
// scripted OpenAI-compatible model on loopback, with a fresh SQLite run store (the default store kind).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";

const root = resolve(import.meta.dirname, "..");
const charter = join(root, "dist/cli/main.js");
const repeats = Math.max(10, Number(process.env.REPEATS ?? 15));
const gnuTime = existsSync("/usr/bin/time") ? "/usr/bin/time" : null;

const { startScriptedOpenAIServer } = await import(join(root, "dist/testing/scripted-openai-server.js"));
const server = await startScriptedOpenAIServer({
  respond: () => ({ kind: "text", text: "done" }),
});
const directory = await mkdtemp(join(tmpdir(), "charter-bench-startup-"));
const agentPath = join(directory, "agent.md");
const configPath = join(directory, "charter.json");
await writeFile(
  agentPath,
  "---\nmodels: [local/test-model]\ntoolPolicy: optional\nmaxTurns: 1\n---\nAnswer briefly.\n",
);
await writeFile(
  configPath,
  JSON.stringify({
    providers: {
      local: {
        type: "openai-compatible",
        baseUrl: server.baseUrl,
        apiKey: "bench",
        models: { "test-model": { contextWindow: 32000 } },
      },
    },
  }),
);

let runNumber = 0;
const commands = [
  { name: "node -e 0", argv: () => ["-e", "0"] },
  { name: "charter --version", argv: () => [charter, "--version"] },
  { name: "charter --help", argv: () => [charter, "--help"] },
  {
    name: "charter run (1 turn, no tools)",
    argv: () => {
      runNumber += 1;
      const store = `sqlite:${join(directory, `store-${runNumber}.db`)}`;
      return [
        charter,
        "run",
        agentPath,
        "Say done.",
        "--config",
        configPath,
        "--store",
        store,
        "--runs-dir",
        join(directory, "runs"),
      ];
    },
    expectExit: 0,
  },
];

/** Runs one process to its exit; resolves with its wall time in ms and peak RSS in KB (null without GNU time). */
function measure(command) {
  const argv = command.argv();
  const [file, args] = gnuTime
    ? [gnuTime, ["-f", "charter-bench-maxrss:%M", process.execPath, ...argv]]
    : [process.execPath, argv];
  return new Promise((resolvePromise, reject) => {
    const start = performance.now();
    const child = spawn(file, args, { cwd: directory, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const wallMs = performance.now() - start;
      if ((command.expectExit ?? 0) !== code) {
        reject(new Error(`${command.name} exited ${code}: ${stderr.slice(-2000)}`));
        return;
      }
      const match = /charter-bench-maxrss:(\d+)/.exec(stderr);
      resolvePromise({ wallMs, maxRssKb: match ? Number(match[1]) : null });
    });
  });
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const samples = new Map(commands.map((command) => [command.name, []]));
try {
  for (const command of commands) await measure(command); // warm the file cache once
  for (let round = 0; round < repeats; round += 1) {
    for (const command of commands) samples.get(command.name).push(await measure(command));
  }
} finally {
  await server.close();
  await rm(directory, { recursive: true, force: true });
}

const baseline = samples.get("node -e 0");
const baselineWall = median(baseline.map((sample) => sample.wallMs));
const baselineRss = gnuTime ? median(baseline.map((sample) => sample.maxRssKb)) : null;
console.log(`start-up, medians of ${repeats} interleaved runs each (Node ${process.version})`);
console.log("command                          wall ms   x node   peak MB   x node");
for (const command of commands) {
  const list = samples.get(command.name);
  const wall = median(list.map((sample) => sample.wallMs));
  const rss = gnuTime ? median(list.map((sample) => sample.maxRssKb)) : null;
  const rssText =
    rss === null
      ? "      n/a      n/a"
      : `${(rss / 1024).toFixed(1).padStart(9)}${(rss / baselineRss).toFixed(2).padStart(9)}`;
  console.log(
    `${command.name.padEnd(31)}${wall.toFixed(1).padStart(9)}${(wall / baselineWall).toFixed(2).padStart(9)}${rssText}`,
  );
}
