// `npm run bench`: Charter's per-turn orchestration overhead against a bare loop, in one process; the same with
// the run store on (a durable checkpoint at every COMMIT); and `verify` throughput on a 100,000-entry transcript.
//
// Scenario (the peers' harness scenario): T turns; on turns 1..T-1 the model calls `echo`, on turn T it
// answers "done". The model is in process and answers at once, so what remains is the runtime's own work:
// contract checks, the state machine, protocol adaptation, tool validation and pipeline, token counting,
// and the transcript's redaction + canonical JSON + BLAKE3 hash chain over every state transition.
//
// Knobs: BENCH_SECONDS [2] per repetition, BENCH_REPS [5] repetitions (the median is reported),
// BENCH_VERIFY_ENTRIES [100000], BENCH_VERIFY_REPS [5], CHARTER_BENCH_POSTGRES_URL (postgres://...: also measure
// the durable path on PostgreSQL, in a schema of its own that is dropped afterwards; skipped when unset),
// BENCH_KEEP=1 (keep the temporary directory with the SQLite files and the verify run directory),
// BENCH_ONLY=verify (run only the verify section, ~25 s instead of ~2 min 15 s).
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemEnvironment } from "../dist/foundation/environment.js";
import { SecretRedactor } from "../dist/foundation/secret-redactor.js";
import { openRunStore } from "../dist/store/open-run-store.js";
import { createStoreTranscriptWriter } from "../dist/store/store-transcript-writer.js";
import { verifyStoredRun } from "../dist/store/verify-stored-run.js";
import { createHashChainTranscript } from "../dist/transcript/hash-chain-transcript.js";
import { createInMemoryTranscriptWriter } from "../dist/transcript/in-memory-transcript-writer.js";
import { createJsonlTranscriptWriter } from "../dist/transcript/jsonl-transcript-writer.js";
import { createTeeTranscriptWriter } from "../dist/transcript/tee-transcript-writer.js";
import { verifyEntries, verifyRunDirectory } from "../dist/transcript/verify-transcript.js";
import { loadBenchScenario } from "./bench-scenario.mjs";

const minimumSeconds = Number(process.env.BENCH_SECONDS ?? 2);
const repetitions = Number(process.env.BENCH_REPS ?? 5);
const verifyEntryCount = Number(process.env.BENCH_VERIFY_ENTRIES ?? 100_000);
const verifyRepetitions = Number(process.env.BENCH_VERIFY_REPS ?? 5);
const postgresUrl = process.env.CHARTER_BENCH_POSTGRES_URL || null;
const onlySection = process.env.BENCH_ONLY || null;
if (onlySection !== null && onlySection !== "verify") {
  throw new Error(`BENCH_ONLY=${onlySection}: the only section that runs alone is "verify"`);
}
const runOverheadSections = onlySection === null;

const { prompt, scriptedStep, defineEcho, prepareBenchAgent, checkResult, runDurableSession } =
  await loadBenchScenario(new URL("../dist/", import.meta.url));
const echo = defineEcho({ readOnlyHint: true });
const agent = prepareBenchAgent(echo);
const unannotatedAgent = prepareBenchAgent(defineEcho(null));

let verified = false;
async function charterSession(turns) {
  // Every entry is redacted, canonicalised and hashed into the chain; the first session also keeps its entries
  // and must verify. Later sessions do not retain entries (persisting them is the run store's job).
  const writer = verified ? undefined : createInMemoryTranscriptWriter();
  const { result } = await agent.run({
    prompt: prompt(turns),
    ...(writer ? { transcriptWriter: writer } : {}),
  });
  if (writer) {
    const report = verifyEntries(writer.header, writer.contract, writer.entries, writer.raw);
    if (!report.ok || report.head_hash !== result.transcript.headHash)
      throw new Error("bench transcript does not verify");
    verified = true;
  }
  checkResult(result, turns);
}

const invocation = { agent_path: "bench/run.mjs", config_path: null, cwd: process.cwd(), set: [] };

/** Durable sessions of `durableAgent` in `store` (see runDurableSession in bench-scenario.mjs). */
function durableSession(store, durableAgent = agent) {
  let checked = false;
  return async (turns) => {
    const { runId, result } = await runDurableSession(store, durableAgent, turns, invocation);
    if (!checked) {
      // Once per store, outside timing (warm-up): the stored run verifies, ends where the session's chain ends
      // and is recorded as completed.
      const report = await verifyStoredRun(store, runId);
      const run = await store.getRun(runId);
      if (
        !report.ok ||
        report.head_hash !== result.transcript.headHash ||
        report.entries !== result.transcript.entries ||
        run?.status !== "completed"
      ) {
        throw new Error(
          `stored bench run does not verify: ${JSON.stringify({ report, status: run?.status })}`,
        );
      }
      checked = true;
    }
  };
}

async function bareSession(turns) {
  // The baseline: a plain while loop calling the same model function and the same tool.
  const messages = [
    { role: "system", content: "You are a benchmark agent." },
    { role: "user", content: prompt(turns) },
  ];
  let calls = 0;
  for (;;) {
    const step = scriptedStep(++calls, turns);
    if (step.kind === "text") {
      messages.push({ role: "assistant", content: step.text });
      break;
    }
    const toolCall = step.calls[0];
    messages.push({
      role: "assistant",
      content: "",
      tool_calls: [
        { id: toolCall.id, function: { name: toolCall.name, arguments: JSON.stringify(toolCall.arguments) } },
      ],
    });
    const output = await echo.execute(JSON.parse(JSON.stringify(toolCall.arguments)), {});
    messages.push({ role: "tool", tool_call_id: toolCall.id, content: output.text });
  }
  if (calls !== turns) throw new Error("bare session miscounted");
}

async function measure(session, turns) {
  const warmUntil = performance.now() + 1000;
  while (performance.now() < warmUntil) await session(turns);
  const perTurn = [];
  for (let repetition = 0; repetition < repetitions; repetition++) {
    globalThis.gc?.();
    let sessions = 0;
    const start = performance.now();
    while (performance.now() - start < minimumSeconds * 1000) {
      await session(turns);
      sessions++;
    }
    perTurn.push(((performance.now() - start) * 1000) / (sessions * turns));
  }
  perTurn.sort((a, b) => a - b);
  return perTurn[Math.floor(perTurn.length / 2)];
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const us = (value) => `${value.toFixed(1).padStart(7)} us/turn`;
const workDirectory = await mkdtemp(join(tmpdir(), "charter-bench-"));
const benchStart = performance.now();
try {
  const { rows, durable } = runOverheadSections ? await measureOverhead() : { rows: null, durable: null };

  // 3. verify throughput on one transcript of verifyEntryCount entries, as a run directory and in SQLite.
  const verify = await measureVerify(join(workDirectory, "verify"));
  console.log(
    `verify ${verify.entries} entries (${(verify.transcriptBytes / 1e6).toFixed(1)} MB of JSONL, ${verify.rawPayloads} raw payloads; built in ${verify.buildSeconds.toFixed(1)} s):\n` +
      `  verifyRunDirectory  ${verify.runDirectory.seconds.toFixed(3)} s   ${Math.round(verify.runDirectory.entriesPerSecond).toLocaleString("en-US")} entries/s (target >= 200,000)\n` +
      `  verifyStoredRun     ${verify.storedRun.seconds.toFixed(3)} s   ${Math.round(verify.storedRun.entriesPerSecond).toLocaleString("en-US")} entries/s (SQLite)`,
  );
  console.log(`bench took ${((performance.now() - benchStart) / 1000).toFixed(0)} s`);
  console.log(
    JSON.stringify({
      benchmark: "per-turn-overhead",
      node: process.version,
      rows,
      durable:
        durable === null
          ? null
          : {
              sqlite: durable.sqlite,
              postgres: durable.postgres ?? null,
              inMemoryT20: rows[0].charter,
              bareT20: rows[0].bare,
            },
      verify,
    }),
  );
} finally {
  if (process.env.BENCH_KEEP === "1") console.error(`kept ${workDirectory}`);
  else await rm(workDirectory, { recursive: true, force: true });
}

/** Sections 1 and 2: per-turn overhead in memory against the bare loop, then durable. */
async function measureOverhead() {
  // 1. In memory (no transcript writer: the chain is computed, no entry retained) against the bare loop.
  const rows = [];
  for (const turns of [20, 5, 50]) {
    const bare = await measure(bareSession, turns);
    const charter = await measure(charterSession, turns);
    rows.push({ turns, bare, charter });
    console.log(
      `T=${String(turns).padStart(2)}  charter ${charter.toFixed(1).padStart(7)} us/turn   bare loop ${bare.toFixed(2).padStart(6)} us/turn   ratio ${(charter / bare).toFixed(0)}x`,
    );
  }
  const [t20, t5, t50] = rows;
  console.log(`per-turn growth: T=50 / T=5 = ${(t50.charter / t5.charter).toFixed(2)} (target <= 1.2)`);
  console.log(`in-process per-turn overhead at T=20: ${t20.charter.toFixed(1)} us (target <= 60 us)`);

  // 2. Durable: the run store on, a checkpoint committed at every COMMIT before the next inference starts.
  const durable = {};
  const sqlitePath = join(workDirectory, "runs.db");
  const sqlite = await openRunStore({ path: sqlitePath, environment: systemEnvironment });
  try {
    const session = durableSession(sqlite);
    durable.sqlite = {};
    for (const turns of [20, 5, 50]) durable.sqlite[`T${turns}`] = await measure(session, turns);
    durable.sqlite.unannotatedT20 = await measure(durableSession(sqlite, unannotatedAgent), 20);
  } finally {
    await sqlite.close();
  }
  if (postgresUrl !== null) {
    const schema = `charter_bench_${process.pid}`;
    const postgres = await openRunStore({
      url: postgresUrl,
      environment: systemEnvironment,
      postgres: { schema },
    });
    try {
      durable.postgres = {
        T20: await measure(durableSession(postgres), 20),
        settings: await postgresSettings(postgresUrl),
      };
    } finally {
      await postgres.close();
      await dropPostgresSchema(postgresUrl, schema);
    }
  }
  console.log(
    `durable per-turn overhead at T=20 (a checkpoint committed at every COMMIT, before the next inference):\n` +
      `  in memory (no writer)  ${us(t20.charter)}\n` +
      `  durable, SQLite        ${us(durable.sqlite.T20)}   (WAL, synchronous=NORMAL; T=5 ${durable.sqlite.T5.toFixed(1)}, T=50 ${durable.sqlite.T50.toFixed(1)}; T=50 / T=5 = ${(durable.sqlite.T50 / durable.sqlite.T5).toFixed(2)})\n` +
      `  durable, SQLite, echo without readOnlyHint ${us(durable.sqlite.unannotatedT20)}   (its call recorded before it runs: two transactions per turn)\n` +
      (durable.postgres !== undefined
        ? `  durable, PostgreSQL    ${us(durable.postgres.T20)}   (synchronous_commit=${durable.postgres.settings.synchronous_commit}, fsync=${durable.postgres.settings.fsync})\n`
        : "  durable, PostgreSQL    skipped (set CHARTER_BENCH_POSTGRES_URL=postgres://... to measure it)\n") +
      `  bare loop              ${us(t20.bare)}`,
  );
  console.log(
    `durable SQLite per turn at T=20: ${durable.sqlite.T20.toFixed(1)} us (target: >= 10x faster than LangGraph + SqliteSaver, ~10,500 us/turn there, i.e. <= 1,050 us)`,
  );
  return { rows, durable };
}

async function withPostgres(url, work) {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function dropPostgresSchema(url, schema) {
  return withPostgres(url, (client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
}

/** The server settings that decide what a COMMIT costs there. */
function postgresSettings(url) {
  return withPostgres(url, async (client) => {
    const settings = {};
    for (const name of ["synchronous_commit", "fsync", "wal_sync_method", "server_version"]) {
      settings[name] = (await client.query(`SHOW ${name}`)).rows[0][name];
    }
    return settings;
  });
}

/**
 * Builds one run of `verifyEntryCount` entries through the real transcript (redaction, canonical JSON, BLAKE3
 * chain), written at once to a JSONL run directory and to a SQLite run store (a tee, as the CLI does): turns of
 * INFER / VALIDATE_CALLS / EXECUTE / OBSERVE / COMMIT entries shaped like the scenario's (a tool call, its
 * result, the counters), each INFER referencing its own raw provider response. Then times verifyRunDirectory
 * and verifyStoredRun over it (median of verifyRepetitions, after one warm-up).
 */
async function measureVerify(directory) {
  const runId = "run_verify_bench";
  const runDirectory = join(directory, runId);
  const store = await openRunStore({ path: join(directory, "verify.db"), environment: systemEnvironment });
  try {
    const buildStart = performance.now();
    const contract = agent.contract;
    const transcript = createHashChainTranscript({
      runId,
      contractHash: contract.contract_hash,
      adapterVersion: contract.adapter_version,
      modelProfileId: contract.model_profile_id,
      redactor: new SecretRedactor(),
      writer: createTeeTranscriptWriter([
        createJsonlTranscriptWriter(runDirectory),
        createStoreTranscriptWriter({ store, agentId: "bench" }),
      ]),
    });
    transcript.writeContract(contract);
    let timestamp = Date.now();
    let tokens = 0;
    let rawPayloads = 0;
    for (let turn = 1; transcript.entryCount < verifyEntryCount; turn++) {
      const callId = `call_${turn}`;
      const text = `hello ${turn}`;
      const argumentsText = JSON.stringify({ text });
      const rawHash = transcript.storeRaw({
        model_response: {
          finishReason: "tool-calls",
          reasoning: "",
          responseId: `chatcmpl-${turn}`,
          text: "",
          toolCalls: [{ argumentsText, id: callId, name: "echo" }],
          usage: { inputTokens: 120 + 28 * turn, outputTokens: 17 },
        },
        provider_response: {
          calls: [{ arguments: { text }, id: callId, name: "echo" }],
          kind: "tool_calls",
          usage: { completion_tokens: 17, prompt_tokens: 120 + 28 * turn },
        },
      });
      rawPayloads++;
      tokens += 137 + 28 * turn;
      const context = 19 * (turn - 1);
      const entries = [
        {
          state: "INFER",
          step_id: `turn-${turn}/infer-1`,
          model_fingerprint: "bench/scripted",
          action: {
            attempt: 1,
            raw_request_hash: null,
            request_metrics: {
              ctx_tokens: context,
              expected_tokens: 362 + context,
              pending_ctx_tokens: 0,
              schema_ctx_tokens: 362,
            },
            target: "bench/scripted",
            txn_id: `txn_${turn.toString(16).padStart(32, "0")}`,
          },
          result: {
            failure_code: null,
            message: {
              content: "",
              role: "assistant",
              tool_calls: [
                {
                  arguments: { text },
                  id: callId,
                  name: "echo",
                  raw_payload: { arguments_text: argumentsText },
                  source_model: "bench/scripted",
                },
              ],
            },
            raw_hash: rawHash,
            raw_response_hash: rawHash,
            recovered_call_ids: [],
            rejected_calls: [],
            status: "native",
            usage: { inputTokens: 120 + 28 * turn, outputTokens: 17 },
          },
        },
        {
          state: "VALIDATE_CALLS",
          step_id: `turn-${turn}/validate_calls`,
          action: { calls: [{ id: callId, name: "echo" }], rejected_calls: 0 },
          result: { execute: [callId], planned: [], violation: null },
        },
        {
          state: "EXECUTE",
          step_id: `turn-${turn}/execute`,
          action: { calls: [{ arguments: { text }, id: callId, name: "echo" }] },
          result: {
            results: [
              {
                call_id: callId,
                characters_in: 18,
                characters_out: text.length,
                content: text,
                error_code: null,
                executed: true,
                handle: null,
                latency_ms: 0.1,
                source: { kind: "function", server: null, tool: "echo" },
                status: "ok",
                tool_name: "echo",
              },
            ],
          },
        },
        {
          state: "OBSERVE",
          step_id: `turn-${turn}/observe`,
          action: { results: 1 },
          result: {
            forced_final_turn: false,
            observed: [{ error_code: null, guarded: false, id: callId, status: "ok" }],
            pending_ctx_tokens: 19,
          },
        },
        {
          state: "COMMIT",
          step_id: `turn-${turn}/commit`,
          action: {
            counters: { currentCtxTokens: context + 19, pendingCtxTokens: 0, schemaCtxTokens: 362 },
            tokens_consumed: tokens,
            turn,
          },
          result: { forced_final_turn: false, next: "INFER" },
        },
      ];
      for (const entry of entries) {
        if (transcript.entryCount >= verifyEntryCount) break;
        transcript.append({ model_fingerprint: null, ...entry, turn, timestamp: timestamp++ });
      }
      // Bounded buffers: the store writer keeps entries until a batch, the file writer until written.
      if (turn % 1000 === 0) await transcript.flush();
    }
    await transcript.close();
    const buildSeconds = (performance.now() - buildStart) / 1000;
    const headHash = transcript.headHash;
    const transcriptBytes = (await stat(join(runDirectory, "transcript.jsonl"))).size;
    const rawFiles = (await readdir(join(runDirectory, "raw"))).length;
    if (rawFiles !== rawPayloads)
      throw new Error(`expected ${rawPayloads} raw payload files, found ${rawFiles}`);

    async function time(verifyOnce) {
      const seconds = [];
      for (let repetition = 0; repetition <= verifyRepetitions; repetition++) {
        globalThis.gc?.();
        const start = performance.now();
        const report = await verifyOnce();
        const elapsed = (performance.now() - start) / 1000;
        if (!report.ok || report.entries !== verifyEntryCount || report.head_hash !== headHash) {
          throw new Error(`the verify benchmark's transcript does not verify: ${JSON.stringify(report)}`);
        }
        if (repetition > 0) seconds.push(elapsed); // the first run warms up (and the page cache)
      }
      const middle = median(seconds);
      return { seconds: middle, entriesPerSecond: verifyEntryCount / middle, all: seconds };
    }
    return {
      entries: verifyEntryCount,
      transcriptBytes,
      rawPayloads,
      buildSeconds,
      runDirectory: await time(() => verifyRunDirectory(runDirectory)),
      storedRun: await time(() => verifyStoredRun(store, runId)),
    };
  } finally {
    await store.close();
  }
}
