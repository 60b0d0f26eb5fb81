import type { ChainBinding } from "../transcript/chain-link-hash.js";
import { encodeLineBlock } from "../transcript/encode-line-block.js";
import { extendVerifiedPrefix } from "../transcript/extend-verified-prefix.js";
import { createLineBlockPool, type LineBlockPool } from "../transcript/line-block-pool.js";
import { type LineBlockTaskResult, runLineBlockTask } from "../transcript/line-block-task.js";
import { bindRawRequestParts } from "../transcript/raw-request-parts.js";
import type { TranscriptHeader } from "../transcript/transcript-entry.js";
import {
  createTranscriptEntryVerifier,
  type RawPayloadIndex,
  type VerifiedPrefix,
} from "../transcript/transcript-entry-verifier.js";
import type { VerificationFailure } from "../transcript/verification-report.js";
import type { RunStore } from "./run-store.js";
import type { StoredEntryLineText } from "./stored-records.js";

/** How far the stored lines verified, the first fault met, and the run's raw payloads. */
export interface StoredLinesVerification {
  readonly verified: number;
  readonly headHash: string;
  readonly failure: VerificationFailure | null;
  /** Every raw payload the run stored, by hash: true when it hashes to its hash. */
  readonly rawIndex: RawPayloadIndex;
}

/** Lines per page: large enough that a page is worth handing to a thread, small enough to share them out. */
const pageSize = 2500;
/** What a stored line is taken to weigh when deciding, before reading any, whether threads pay. */
const assumedLineBytes = 512;

interface PageInFlight {
  /** The seq (as stored) of the page's first line. */
  readonly firstSeq: number;
  readonly lines: number;
  readonly result: Promise<LineBlockTaskResult | null>;
}

/**
 * Verifies a run's stored lines in seq order, as the entry verifier's `checkLine` would one by one, with the
 * checks that need no other line done a page at a time (`checkTranscriptLineBlock`), on worker threads when
 * the run is large. Pages are joined in order into the longest prefix of lines that pass; from the first page
 * that does not pass as a whole on (read again), the entry verifier checks line by line, and so names the first
 * fault exactly as it would have alone.
 */
export async function verifyStoredLines(
  store: RunStore,
  runId: string,
  header: TranscriptHeader,
  entryCount: number,
): Promise<StoredLinesVerification> {
  const binding: ChainBinding = {
    contractHash: header.contract_hash,
    adapterVersion: header.adapter_version,
    modelProfileId: header.model_profile_id,
  };
  let prefix: VerifiedPrefix = { lines: 0, headHash: header.genesis_hash };
  const pool = createLineBlockPool(entryCount * assumedLineBytes);
  // Read between the pages of lines, and hashed by the pool, so that no thread waits for the payloads first.
  const rawIndexReady = indexStoredRawPayloads(store, runId, pool);
  let rawIndex: RawPayloadIndex | null = null;
  const inFlight: PageInFlight[] = [];
  // Where the line-by-line check takes over: the first seq of the first page that did not pass as a whole.
  let takeOverAt: number | null = null;

  async function settle(page: PageInFlight): Promise<void> {
    rawIndex ??= await rawIndexReady;
    const result = await page.result;
    const extended =
      result?.kind === "lines" ? extendVerifiedPrefix(prefix, result.result, rawIndex, page.lines) : null;
    if (extended === null) takeOverAt = page.firstSeq;
    else prefix = extended;
  }

  try {
    // The pages' texts are not kept: the few pages the line-by-line check needs are read again.
    let rowsRead = 0;
    for await (const page of store.readEntryLineTexts(runId, { pageSize })) {
      const firstSeq = (page[0] as StoredEntryLineText).seq;
      // The seq column must number the rows 0, 1, 2...: reads from a seq (resume, paging) rely on it. A page where
      // it does not is left to the line-by-line check, which names the first row out of place.
      const numbered = page.every((stored, index) => stored.seq === rowsRead + index);
      rowsRead += page.length;
      const block = numbered ? encodeLineBlock(page.map((stored) => stored.line)) : null;
      let result: Promise<LineBlockTaskResult | null> = Promise.resolve(null);
      if (block !== null) {
        // The block's buffers are its own: handing them over moves no bytes.
        result = pool.run({ kind: "lines", ...block, binding }, [
          block.bytes.buffer as ArrayBuffer,
          block.lineEnds.buffer as ArrayBuffer,
        ]);
      }
      inFlight.push({ firstSeq, lines: page.length, result });
      // Enough pages ahead to keep every thread busy while this one reads the next.
      while (takeOverAt === null && inFlight.length > 2 * Math.max(pool.workers, 1) - 1) {
        await settle(inFlight.shift() as PageInFlight);
      }
      if (takeOverAt !== null) break;
    }
    while (takeOverAt === null && inFlight.length > 0) await settle(inFlight.shift() as PageInFlight);
    rawIndex ??= await rawIndexReady;
  } finally {
    pool.close();
    // Its failure, if any, surfaces above; this only keeps it from going unobserved when a line read failed first.
    await rawIndexReady.catch(() => undefined);
  }
  if (takeOverAt === null)
    return { verified: prefix.lines, headHash: prefix.headHash, failure: null, rawIndex };

  const verifier = createTranscriptEntryVerifier(header, rawIndex, prefix);
  for await (const page of store.readEntryLineTexts(runId, { pageSize, fromSeq: takeOverAt })) {
    for (const stored of page) {
      if (stored.seq !== verifier.verified) {
        return {
          verified: verifier.verified,
          headHash: verifier.headHash,
          failure: {
            seq: verifier.verified,
            step_id: null,
            reason_code: "SEQUENCE_GAP",
            detail: `the row stored as seq ${stored.seq} is where entry ${verifier.verified} belongs`,
          },
          rawIndex,
        };
      }
      const failure = verifier.checkLine(stored.line, verifier.verified + 1);
      if (failure !== null)
        return { verified: verifier.verified, headHash: verifier.headHash, failure, rawIndex };
    }
  }
  return { verified: verifier.verified, headHash: verifier.headHash, failure: null, rawIndex };
}

/** Raw payload pages read and hashed (on the pool) per page. */
const rawPageSize = 5000;

/** The run's stored raw payloads by hash: true when the stored text hashes to the hash. */
async function indexStoredRawPayloads(
  store: RunStore,
  runId: string,
  pool: LineBlockPool,
): Promise<RawPayloadIndex> {
  const pages: { hashes: string[]; intact: Promise<LineBlockTaskResult | null> }[] = [];
  for await (const page of store.readRunRawPayloads(runId, { pageSize: rawPageSize })) {
    const hashes = page.map((payload) => payload.hash);
    const task = { kind: "raw-texts", hashes, texts: page.map((payload) => payload.json) } as const;
    pages.push({ hashes, intact: pool.run(task).then((result) => result ?? runLineBlockTask(task)) });
  }
  const index = new Map<string, boolean>();
  const composites = new Map<string, readonly string[]>();
  for (const page of pages) {
    const result = await page.intact;
    page.hashes.forEach((hash, position) => {
      index.set(hash, result?.kind === "raw-texts" && result.intact[position] === true);
    });
    if (result?.kind === "raw-texts") {
      for (const [position, parts] of result.composites)
        composites.set(page.hashes[position] as string, parts);
    }
  }
  bindRawRequestParts(index, composites);
  return index;
}
