// Summarise a .cpuprofile: top self-time frames, top inclusive frames, and self time grouped by file.
import { readFileSync } from "node:fs";

const profile = JSON.parse(readFileSync(process.argv[2], "utf8"));
const top = Number(process.argv[3] ?? 40);
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map();
const dt = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i++)
  self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (dt[i] ?? 0));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const short = (url) =>
  url.replace(/^file:\/\/.*?\/(node_modules|dist|bench)\//, "$1/").replace(/^node:/, "node:");
const label = (n) =>
  `${n.callFrame.functionName || "(anon)"} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const selfBy = new Map(),
  fileBy = new Map(),
  incl = new Map();
for (const [id, t] of self) {
  const n = nodes.get(id);
  const l = label(n);
  selfBy.set(l, (selfBy.get(l) ?? 0) + t);
  const f = n.callFrame.url
    ? short(n.callFrame.url).replace(/(node_modules\/(@[^/]+\/)?[^/]+).*/, "$1")
    : n.callFrame.functionName;
  fileBy.set(f, (fileBy.get(f) ?? 0) + t);
  // inclusive: each distinct label on the stack once
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const cl = label(nodes.get(cur));
    if (seen.has(cl)) continue;
    seen.add(cl);
    incl.set(cl, (incl.get(cl) ?? 0) + t);
  }
}
const print = (title, map, n) => {
  console.log(`\n== ${title} (total ${(total / 1e6).toFixed(2)} s)`);
  for (const [k, v] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n))
    console.log(
      `${(v / 1e3).toFixed(0).padStart(7)} ms ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`,
    );
};
print("self by frame", selfBy, top);
print("self by file/package", fileBy, top);
const filter = process.argv[4] ? new RegExp(process.argv[4]) : /dist\//;
print(`inclusive (matching ${filter})`, new Map([...incl].filter(([k]) => filter.test(k))), top);
