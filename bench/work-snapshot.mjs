// npm run bench:work: what a work item's atomicity costs on a large repository, beside `git stash push -u` plus
// `git stash pop` on the same repository in the same run.
//
// The repository: FILES files (10,000) of about 10 KB of source-like text each (~100 MB), in 100 folders, committed,
// with an ignored build folder and a few untracked files of the user's. The agent's change, applied between the
// snapshots and never timed: 20 files modified (a few lines replaced, a few appended), 5 created, 5 deleted.
//
// Charter, as `charter work run` does it for an item that is then rolled back (the limits deny 30 files > 10):
//   freeze     HEAD state and a copy of the index, the before snapshot (commit through a temporary index, ref) and
//              the before state hash (BLAKE3 over every file's path, mode and BLAKE3 of its content)
//   admission  the after snapshot and state hash, the change between the snapshots (files, lines), the rules
//   thaw       the working tree restored to the before snapshot, HEAD and index put back, the final state hash
// git stash: the same change in the working tree, `git stash push -u` then `git stash pop` (which leaves the
// change where it was). Each repetition checks that both sides end where they should (untimed).
//
// Rounds alternate which side goes first; the medians of REPS rounds (5) after one warm-up round are printed with
// the ratio, in wall time (the target) and in CPU time (this process and the git processes it ran, which other
// work on a shared machine moves less). The repository is generated in a temporary folder (WORK_BENCH_DIR to reuse or keep one) and removed
// at the end. `git stash` here is that throwaway repository's own stash, never the project's.
//
//   npm run bench:work            # ~1-2 min on a quiet host: ~20 s to generate, then REPS rounds
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const dist = new URL("../dist/", import.meta.url);
const load = (file) => import(new URL(file, dist).href);
const [
  { openWorkRepository },
  { freezeWorkingTreeState },
  { stateHash, workingTreeListing },
  { workChange, admissionDenial },
  { thawWorkingTree },
  { readHeadState, restoreHeadState, saveIndex },
] = await Promise.all([
  load("work/work-repository.js"),
  load("work/freeze-working-tree.js"),
  load("work/state-listing.js"),
  load("work/work-change.js"),
  load("work/thaw-working-tree.js"),
  load("work/head-state.js"),
]);

const fileCount = Number(process.env.FILES ?? 10_000);
const reps = Math.max(3, Number(process.env.REPS ?? 5));
const folders = 100;
const keep = process.env.WORK_BENCH_DIR !== undefined;
const root = process.env.WORK_BENCH_DIR ?? (await mkdtemp(join(tmpdir(), "charter-work-bench-")));
const limits = { max_files: 10, max_tool_ops: 50, max_delta_size: 100 };

function git(...args) {
  return execFileSync("git", args, {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "Bench",
      GIT_AUTHOR_EMAIL: "bench@example.com",
      GIT_COMMITTER_NAME: "Bench",
      GIT_COMMITTER_EMAIL: "bench@example.com",
    },
  }).trim();
}

// Deterministic content: a small PRNG over a vocabulary of identifiers, so that files look (and compress) like
// source code and every run generates the same repository.
let seed = 0x9e3779b9;
function random() {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 0x1_0000_0000;
}
const words = (
  "const let return function async await import export from if else for while of in new this class extends " +
  "value result error state index count item items path file files name names hash change before after " +
  "repository snapshot tree commit branch limit limits receipt record agent tool tools run runs model turn"
).split(" ");
function sourceText(bytes) {
  const lines = [];
  let size = 0;
  while (size < bytes) {
    const indent = "  ".repeat(Math.floor(random() * 4));
    const count = 3 + Math.floor(random() * 9);
    const line = `${indent}${Array.from({ length: count }, () => words[Math.floor(random() * words.length)]).join(" ")};`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join("\n")}\n`;
}
const pathOf = (index) =>
  `src/m${String(index % folders).padStart(2, "0")}/file${String(index).padStart(5, "0")}.ts`;

async function generate() {
  await mkdir(root, { recursive: true });
  if (existsSync(join(root, ".git"))) {
    // A kept repository: back to its generated state, whatever an interrupted run left.
    git("reset", "-q", "--hard");
    git("clean", "-fdq", "src");
    return false;
  }
  git("init", "-q", "-b", "main");
  for (let index = 0; index < fileCount; index++) {
    const path = join(root, pathOf(index));
    if (index < folders) await mkdir(join(path, ".."), { recursive: true });
    // 2-18 KB, 10 KB on average: ~100 MB over 10,000 files.
    await writeFile(path, sourceText(2048 + Math.floor(random() * 16_384)));
  }
  await writeFile(join(root, ".gitignore"), "build/\n");
  git("add", "-A");
  git("commit", "-q", "-m", "generated");
  // The user's own state around the item: an ignored build folder and a few untracked files.
  await mkdir(join(root, "build"), { recursive: true });
  for (let index = 0; index < 20; index++)
    await writeFile(join(root, "build", `out${index}.js`), sourceText(8192));
  for (let index = 0; index < 3; index++) await writeFile(join(root, `notes-${index}.md`), sourceText(2048));
  return true;
}

// The agent's change: fixed files, so that every round makes (and undoes) the same one.
const modifiedIndexes = Array.from({ length: 20 }, (_, index) => 37 + index * 487);
const deletedIndexes = Array.from({ length: 5 }, (_, index) => 211 + index * 1931);
const createdPaths = Array.from(
  { length: 5 },
  (_, index) => `src/m${String(index).padStart(2, "0")}/added${index}.ts`,
);
const originals = new Map();
let createdText = null;

async function applyChange() {
  for (const index of modifiedIndexes) {
    const path = join(root, pathOf(index));
    const text = originals.get(path) ?? (await readFile(path, "utf8"));
    originals.set(path, text);
    const lines = text.split("\n");
    lines.splice(10, 3, "  // changed by the agent", "  return result;");
    await writeFile(path, `${lines.join("\n")}export const added = true;\n`);
  }
  for (const index of deletedIndexes) {
    const path = join(root, pathOf(index));
    originals.set(path, originals.get(path) ?? (await readFile(path, "utf8")));
    await rm(path);
  }
  createdText ??= sourceText(6000);
  for (const path of createdPaths) await writeFile(join(root, path), createdText);
}

async function undoChange() {
  for (const [path, text] of originals) await writeFile(path, text);
  for (const path of createdPaths) await rm(join(root, path), { force: true });
}

// CPU time of this process and of the git processes it waited for (Linux: /proc/self/stat's cutime and cstime),
// in ms: less moved by other people's work on a shared machine than wall time is.
const clockTicks = 100;
function cpuMs() {
  const own = process.cpuUsage();
  let children = 0;
  try {
    const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
    children = ((Number(fields[13]) + Number(fields[14])) * 1000) / clockTicks;
  } catch {
    // Not Linux: own CPU time only.
  }
  return (own.user + own.system) / 1000 + children;
}

let runNumber = 0;
async function charterItem(repository) {
  runNumber++;
  const runId = `bench-${process.pid}-${runNumber}`;
  const indexCopy = join(repository.gitDirectory, `charter-bench-index-${runNumber}`);
  const cpuStart = cpuMs();
  const start = performance.now();
  const head = await readHeadState(repository);
  const hasIndex = await saveIndex(repository, indexCopy);
  const frozenBefore = await freezeWorkingTreeState(
    repository,
    `refs/charter/snapshots/${runId}/before`,
    "before",
  );
  const before = frozenBefore.commit;
  const beforeHash = stateHash(frozenBefore.listing);
  const frozen = performance.now();
  const frozenCpu = cpuMs() - cpuStart;

  await applyChange();

  const admissionCpu = cpuMs();
  const admissionStart = performance.now();
  const frozenAfter = await freezeWorkingTreeState(
    repository,
    `refs/charter/snapshots/${runId}/after`,
    "after",
  );
  const after = frozenAfter.commit;
  const afterListing = frozenAfter.listing;
  const afterHash = stateHash(afterListing);
  const change = await workChange(repository, before, after, afterListing);
  const denial = admissionDenial(change, 30, limits, null);
  const admitted = performance.now();
  await thawWorkingTree(repository, before);
  await restoreHeadState(repository, head, hasIndex ? indexCopy : null);
  const outputHash = stateHash(await workingTreeListing(repository));
  const end = performance.now();
  const cpu = frozenCpu + cpuMs() - admissionCpu;

  if (denial !== "Exceeded max files: 30 > 10") throw new Error(`unexpected admission: ${denial}`);
  if (outputHash !== beforeHash || afterHash === beforeHash)
    throw new Error("charter: the thaw missed the before state");
  await rm(indexCopy, { force: true });
  git("update-ref", "-d", `refs/charter/snapshots/${runId}/before`);
  git("update-ref", "-d", `refs/charter/snapshots/${runId}/after`);
  return {
    total: frozen - start + (end - admissionStart),
    freeze: frozen - start,
    admission: admitted - admissionStart,
    thaw: end - admitted,
    cpu,
  };
}

async function gitStash(repository, expectedHash) {
  await applyChange();
  const cpuStart = cpuMs();
  const start = performance.now();
  git("stash", "push", "-u", "-q");
  git("stash", "pop", "-q");
  const total = performance.now() - start;
  const cpu = cpuMs() - cpuStart;
  if (stateHash(await workingTreeListing(repository)) !== expectedHash)
    throw new Error("git stash: not back at the change");
  await undoChange();
  return { total, cpu };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

try {
  const generateStart = performance.now();
  const generated = await generate();
  const objects = git("count-objects", "-v");
  const sizeKb = ["size", "size-pack"].reduce(
    (sum, key) => sum + Number(new RegExp(`^${key}: (\\d+)$`, "m").exec(objects)?.[1] ?? 0),
    0,
  );
  const workingBytes = Number(
    execFileSync("du", ["-sb", "--exclude=.git", root], { encoding: "utf8" }).split("\t")[0],
  );
  const repository = await openWorkRepository(root);
  // The state the stash side must come back to: the change applied.
  await applyChange();
  const changedHash = stateHash(await workingTreeListing(repository));
  await undoChange();
  console.log(
    `work snapshot: ${fileCount} files, ${(workingBytes / 1e6).toFixed(1)} MB in the working tree, ${(sizeKb / 1024).toFixed(1)} MB of objects` +
      ` (${generated ? `generated in ${((performance.now() - generateStart) / 1000).toFixed(1)} s` : "reused"}); change: 20 modified, 5 created, 5 deleted; Node ${process.version}, git ${git("--version").replace("git version ", "")}, load ${loadavg()
        .map((value) => value.toFixed(2))
        .join(", ")}`,
  );

  // The first item in a repository has no BLAKE3 of its blobs yet (the cache in the git folder): it reads them all.
  await rm(join(root, ".git", "charter-blob-blake3"), { force: true });
  const first = await charterItem(repository);
  console.log(
    `first item (no blob hash cache yet): charter ${first.total.toFixed(0)} ms (freeze ${first.freeze.toFixed(0)}, admission ${first.admission.toFixed(0)}, thaw ${first.thaw.toFixed(0)}); warm-up`,
  );
  await gitStash(repository, changedHash);
  const charter = [];
  const stash = [];
  for (let round = 0; round < reps; round++) {
    if (round % 2 === 0) {
      charter.push(await charterItem(repository));
      stash.push(await gitStash(repository, changedHash));
    } else {
      stash.push(await gitStash(repository, changedHash));
      charter.push(await charterItem(repository));
    }
    const last = charter.at(-1);
    console.log(
      `round ${round + 1}: charter ${last.total.toFixed(0)} ms (freeze ${last.freeze.toFixed(0)}, admission ${last.admission.toFixed(0)}, thaw ${last.thaw.toFixed(0)}; CPU ${last.cpu.toFixed(0)}), git stash push -u + pop ${stash.at(-1).total.toFixed(0)} ms (CPU ${stash.at(-1).cpu.toFixed(0)})`,
    );
  }
  const charterMs = median(charter.map((sample) => sample.total));
  const stashMs = median(stash.map((sample) => sample.total));
  console.log(
    `medians of ${reps} rounds: charter freeze + admission + thaw ${charterMs.toFixed(0)} ms` +
      ` (freeze ${median(charter.map((sample) => sample.freeze)).toFixed(0)}, admission ${median(charter.map((sample) => sample.admission)).toFixed(0)}, thaw ${median(charter.map((sample) => sample.thaw)).toFixed(0)}),` +
      ` git stash push -u + pop ${stashMs.toFixed(0)} ms`,
  );
  const charterCpu = median(charter.map((sample) => sample.cpu));
  const stashCpu = median(stash.map((sample) => sample.cpu));
  console.log(
    `CPU time (this process and its git processes): charter ${charterCpu.toFixed(0)} ms, git stash ${stashCpu.toFixed(0)} ms: ${(charterCpu / stashCpu).toFixed(2)} x`,
  );
  console.log(
    `charter / git stash, wall time: ${(charterMs / stashMs).toFixed(2)} x (target <= 2); load ${loadavg()
      .map((value) => value.toFixed(2))
      .join(", ")}`,
  );
} finally {
  if (!keep) await rm(root, { recursive: true, force: true });
}
