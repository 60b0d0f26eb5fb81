import { existsSync } from "node:fs";
import { appendFile, readFile, truncate, writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import type { RunStore } from "../../src/store/run-store.js";
import { createStoreTranscriptWriter } from "../../src/store/store-transcript-writer.js";
import { verifyStoredRun } from "../../src/store/verify-stored-run.js";
import { createJsonlTranscriptWriter } from "../../src/transcript/jsonl-transcript-writer.js";
import { createTeeTranscriptWriter } from "../../src/transcript/tee-transcript-writer.js";
import type { VerificationReport } from "../../src/transcript/verification-report.js";
import { verifyRunDirectory } from "../../src/transcript/verify-transcript.js";
import { segmentTampering, sqliteSegmentTable } from "../store/segment-tampering.js";
import { entryInput, startTranscript, temporaryDirectory } from "./transcript-fixtures.js";

// Worker threads start from the compiled worker file, so under vitest (which runs the TypeScript sources) the
// sources verify inline. This file verifies a run large enough for threads with the compiled code as well, and
// requires both to give the same report, tampered or not.
const distribution = resolve(import.meta.dirname, "../../dist");

interface CompiledVerification {
  verifyRunDirectory(runDirectory: string): Promise<VerificationReport>;
  verifyStoredRun(store: unknown, runId: string): Promise<VerificationReport>;
  openRunStore(options: { path: string; environment: unknown }): Promise<RunStore>;
  /** The threads a pool for this much work has, and the result of a task run on it. */
  runOnPool(workBytes: number, task: unknown): Promise<{ workers: number; result: unknown }>;
}

async function loadCompiled(): Promise<CompiledVerification> {
  const file = (path: string) => pathToFileURL(join(distribution, path)).href;
  if (!existsSync(join(distribution, "transcript", "line-block-worker.js"))) {
    throw new Error("dist/ has no compiled verification worker: run `npm run build` first (npm test does)");
  }
  const transcript = await import(file("transcript/verify-transcript.js"));
  const stored = await import(file("store/verify-stored-run.js"));
  const store = await import(file("store/open-run-store.js"));
  const pool = await import(file("transcript/line-block-pool.js"));
  return {
    verifyRunDirectory: transcript.verifyRunDirectory,
    verifyStoredRun: stored.verifyStoredRun,
    openRunStore: store.openRunStore,
    async runOnPool(workBytes, task) {
      const session = pool.createLineBlockPool(workBytes);
      try {
        return { workers: session.workers, result: await session.run(task) };
      } finally {
        session.close();
      }
    },
  };
}

const entryCount = 7_000;
const runId = "run_0001";
let directory: { path: string; remove: () => Promise<void> };
let runDirectory: string;
let databasePath: string;
let compiled: CompiledVerification;
let sourceStore: RunStore;
let compiledStore: RunStore;
let headHash: string;
let referencedRaw: Map<number, string>;

const transcriptFile = () => join(runDirectory, "transcript.jsonl");

beforeAll(async () => {
  compiled = await loadCompiled();
  directory = await temporaryDirectory();
  runDirectory = join(directory.path, runId);
  databasePath = join(directory.path, "runs.db");
  const environment = deterministicEnvironment();
  sourceStore = await openRunStore({ path: databasePath, environment });
  const { transcript } = startTranscript({
    runId,
    writer: createTeeTranscriptWriter([
      createJsonlTranscriptWriter(runDirectory),
      createStoreTranscriptWriter({ store: sourceStore, agentId: "parallel-test" }),
    ]),
  });
  referencedRaw = new Map();
  for (let index = 0; index < entryCount; index++) {
    // ~1.3 KB per entry with text outside ASCII: past the threads' threshold, and two pages of stored lines.
    const output = `résumé ${index} ✓ 🙂 `.repeat(60);
    if (index % 7 === 0) {
      const raw = transcript.storeRaw({ response: { index, text: `answer ${index}` } });
      referencedRaw.set(index, raw);
      transcript.append(
        entryInput(index, {
          state: "INFER",
          step_id: `turn-${index}/infer "quoted"`,
          action: { target: "local/scripted", nested: [{ raw_request_hash: null }] },
          result: { raw_response_hash: raw, output },
        }),
      );
    } else {
      transcript.append(entryInput(index, { result: { status: "ok", output } }));
    }
    if (index % 1000 === 999) await transcript.flush();
  }
  await transcript.close();
  headHash = transcript.headHash;
  compiledStore = await compiled.openRunStore({ path: databasePath, environment });
}, 60_000);

afterAll(async () => {
  await compiledStore?.close();
  await sourceStore?.close();
  await directory?.remove();
});

/** Both implementations' reports on the run as it now is, required equal. */
async function reports(): Promise<{ directory: VerificationReport; stored: VerificationReport }> {
  const inline = await verifyRunDirectory(runDirectory);
  const threaded = await compiled.verifyRunDirectory(runDirectory);
  expect(threaded).toEqual(inline);
  const storedInline = await verifyStoredRun(sourceStore, runId);
  const storedThreaded = await compiled.verifyStoredRun(compiledStore, runId);
  expect(storedThreaded).toEqual(storedInline);
  return { directory: threaded, stored: storedThreaded };
}

// The run's segments, edited behind the store's back.
const segments = () => segmentTampering(sqliteSegmentTable(databasePath));

function storedLine(seq: number): Promise<string> {
  return segments().entryLine(runId, seq);
}

function replaceStoredLine(seq: number, line: string): Promise<void> {
  return segments().replaceEntryLine(runId, seq, line);
}

describe("verification on worker threads", () => {
  it("is large enough for threads, which run the checks on a machine with more than one core", async () => {
    const bytes = (await readFile(transcriptFile())).length;
    expect(bytes).toBeGreaterThan(8 << 20);
    const header = JSON.parse(await readFile(join(runDirectory, "header.json"), "utf8"));
    const { workers, result } = await compiled.runOnPool(bytes, {
      kind: "file-range",
      path: transcriptFile(),
      start: 0,
      end: bytes,
      binding: {
        contractHash: header.contract_hash,
        adapterVersion: header.adapter_version,
        modelProfileId: header.model_profile_id,
      },
    });
    expect(workers).toBe(availableParallelism() > 1 ? Math.min(availableParallelism(), 4) : 0);
    expect(result).toMatchObject({
      kind: "lines",
      result: { passed: entryCount, stoppedAt: null, consumed: bytes, lastHash: headHash },
    });
  });

  it("passes the intact run, from the directory and from the store", async () => {
    const { directory: fromDirectory, stored } = await reports();
    const intact = { ok: true, entries: entryCount, head_hash: headHash, first_bad_entry: null };
    expect(fromDirectory).toEqual(intact);
    expect(stored).toEqual(intact);
  });

  it("names an edited entry in the second half", async () => {
    const original = await readFile(transcriptFile(), "utf8");
    const lines = original.split("\n");
    const seq = 6_000;
    lines[seq] = (lines[seq] as string).replace("résumé 6000", "résumé 6001");
    await writeFile(transcriptFile(), lines.join("\n"));
    const stored = await storedLine(seq);
    await replaceStoredLine(seq, stored.replace("résumé 6000", "résumé 6001"));
    try {
      const { directory: fromDirectory, stored: fromStore } = await reports();
      for (const report of [fromDirectory, fromStore]) {
        expect(report).toMatchObject({ ok: false, entries: seq });
        expect(report.first_bad_entry).toMatchObject({
          seq,
          step_id: `turn-${seq}/execute`,
          reason_code: "RESULT_HASH_MISMATCH",
        });
      }
    } finally {
      await writeFile(transcriptFile(), original);
      await replaceStoredLine(seq, stored);
    }
  });

  it("names the entry in the second half that references a corrupt raw payload", async () => {
    const seq = [...referencedRaw.keys()].find((index) => index > entryCount / 2) as number;
    const raw = referencedRaw.get(seq) as string;
    const path = join(runDirectory, "raw", `${raw}.json`);
    const original = await readFile(path, "utf8");
    await writeFile(path, '{"forged":true}');
    try {
      const { directory: fromDirectory } = await reports();
      expect(fromDirectory).toMatchObject({ ok: false, entries: seq });
      expect(fromDirectory.first_bad_entry).toMatchObject({ seq, reason_code: "RAW_PAYLOAD_HASH_MISMATCH" });
    } finally {
      await writeFile(path, original);
    }
  });

  it("reports a last line cut off mid-write after the lines before it", async () => {
    const original = await readFile(transcriptFile());
    await appendFile(transcriptFile(), '{"v":1,"seq":');
    try {
      const { directory: fromDirectory } = await reports();
      expect(fromDirectory).toMatchObject({ ok: false, entries: entryCount, head_hash: headHash });
      expect(fromDirectory.first_bad_entry).toMatchObject({ seq: entryCount, reason_code: "MALFORMED_LINE" });
    } finally {
      await writeFile(transcriptFile(), original);
    }
  });

  it("detects a removed last line only against a recorded head", async () => {
    const original = await readFile(transcriptFile());
    const withoutLast = original.subarray(0, original.lastIndexOf(0x0a, original.length - 2) + 1);
    await truncate(transcriptFile(), withoutLast.length);
    try {
      const { directory: fromDirectory } = await reports();
      expect(fromDirectory).toMatchObject({ ok: true, entries: entryCount - 1 });
      expect(fromDirectory.head_hash).not.toBe(headHash);
    } finally {
      await writeFile(transcriptFile(), original);
    }
  });
});
