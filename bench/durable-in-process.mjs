// Durable sessions of several variants interleaved in ONE process: what a change to the durable path is worth
// when the machine's own noise (±30 µs/turn between runs minutes apart here) hides it from separate runs.
//
//   node bench/durable-in-process.mjs dist:memory dist:null dist:durable      # where a durable turn's time goes
//   node bench/durable-in-process.mjs /tmp/before-dist /tmp/after-dist        # A/B of two builds (durable)
//
// A variant is `<built dist directory>[:<kind>]`, kind one of:
//   memory   no writer: the transcript chain is computed, nothing is stored (the in-memory figure);
//   null     the durable wiring (store transcript writer + durable run hooks) over a store that stores nothing:
//            what the durable path's JavaScript outside the store costs;
//   memdb    the SQLite run store on `:memory:` (no file, no WAL): SQLite's CPU without file I/O;
//   shm      the SQLite run store on /dev/shm (a file in memory);
//   durable  the SQLite run store on a file under the system's temporary directory (the default).
// Each variant has its own store and its own copy of the modules. Sessions (the bench scenario of
// bench/bench-scenario.mjs: T turns, the echo read-only) run in blocks of BLOCK per variant, the order reversed
// every round, for SECONDS after 2 s of warm-up; the figure is each variant's wall time per turn over all its
// blocks. Knobs: TURNS [20] (at most 60, the agent's limit), SECONDS [20], BLOCK [3]. Files are removed at the end.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { loadBenchScenario } from "./bench-scenario.mjs";

const turns = Number(process.env.TURNS ?? 20);
const seconds = Number(process.env.SECONDS ?? 20);
const block = Number(process.env.BLOCK ?? 3);
const kinds = ["memory", "null", "memdb", "shm", "durable"];
const directories = [];

/** A store that stores nothing and acknowledges every batch as the chain it continues. */
function nullStore() {
  const receipt = async (batch) => {
    const last = batch.entries?.at(-1)?.entry;
    return { entryCount: last === undefined ? 0 : last.seq + 1, headHash: last?.hash ?? "" };
  };
  return { createRun: async () => ({}), appendCommit: receipt, finishRun: receipt, close: async () => {} };
}

/** `<dist>[:<kind>]` as the directory and the kind (durable when none is named). */
function parseVariant(spec) {
  const separator = spec.lastIndexOf(":");
  const suffix = separator > 0 ? spec.slice(separator + 1) : "";
  return kinds.includes(suffix)
    ? { directory: spec.slice(0, separator), kind: suffix }
    : { directory: spec, kind: "durable" };
}

async function createVariant(spec, index) {
  const { directory: distDirectory, kind } = parseVariant(spec);
  const root = pathToFileURL(`${resolve(distDirectory)}/`);
  const { systemEnvironment } = await import(new URL("foundation/environment.js", root).href);
  const { openRunStore } = await import(new URL("store/open-run-store.js", root).href);
  const { prompt, defineEcho, prepareBenchAgent, checkResult, runDurableSession } =
    await loadBenchScenario(root);
  const agent = prepareBenchAgent(defineEcho({ readOnlyHint: true }));
  let store = null;
  if (kind === "null") store = nullStore();
  else if (kind !== "memory") {
    const directory = await mkdtemp(
      join(kind === "shm" ? "/dev/shm" : tmpdir(), `charter-in-process-${index}-`),
    );
    directories.push(directory);
    const path = kind === "memdb" ? ":memory:" : join(directory, "runs.db");
    store = await openRunStore({ path, environment: systemEnvironment });
  }
  const invocation = {
    agent_path: "bench/durable-in-process.mjs",
    config_path: null,
    cwd: process.cwd(),
    set: [],
  };
  return {
    name: `${distDirectory}:${kind}`,
    store,
    milliseconds: 0,
    sessions: 0,
    async session() {
      if (store === null) checkResult((await agent.run({ prompt: prompt(turns) })).result, turns);
      else await runDurableSession(store, agent, turns, invocation);
    },
  };
}

const specs = process.argv.slice(2);
if (specs.length === 0) {
  console.error("usage: node bench/durable-in-process.mjs <dist>[:memory|null|memdb|shm|durable] ...");
  process.exit(2);
}
const variants = [];
for (const [index, spec] of specs.entries()) variants.push(await createVariant(spec, index));
try {
  const warmUpEnd = performance.now() + 2000;
  while (performance.now() < warmUpEnd) for (const variant of variants) await variant.session();
  const end = performance.now() + seconds * 1000;
  for (let round = 0; performance.now() < end; round++) {
    for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
      const start = performance.now();
      for (let session = 0; session < block; session++) await variant.session();
      variant.milliseconds += performance.now() - start;
      variant.sessions += block;
    }
  }
  console.log(`T=${turns}, ${seconds} s, blocks of ${block} sessions, order reversed every round`);
  for (const variant of variants) {
    const perTurn = (variant.milliseconds * 1000) / (variant.sessions * turns);
    console.log(
      `${variant.name.padEnd(48)} ${perTurn.toFixed(1).padStart(7)} us/turn  (${variant.sessions} sessions)`,
    );
  }
} finally {
  for (const variant of variants) await variant.store?.close();
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
}
