import type { ChainBinding } from "../transcript/chain-link-hash.js";
import { encodeLineBlock } from "../transcript/encode-line-block.js";
import { extendVerifiedPrefix } from "../transcript/extend-verified-prefix.js";
import { createLineBlockPool, type LineBlockPool } from "../transcript/line-block-pool.js";
import type { LineBlockTaskResult } from "../transcript/line-block-task.js";
import type { TranscriptHeader } from "../transcript/transcript-entry.js";
import {
  createTranscriptEntryVerifier,
  type RawPayloadIndex,
  type TranscriptEntryVerifier,
  type VerifiedPrefix,
} from "../transcript/transcript-entry-verifier.js";
import type { VerificationFailure } from "../transcript/verification-report.js";
import type { RunStore } from "./run-store.js";
import type { StoredEntryLineText } from "./stored-records.js";

/** How far the stored lines verified, and the first fault met. */
export interface StoredLinesVerification {
  readonly verified: number;
  readonly headHash: string;
  readonly failure: VerificationFailure | null;
}

/** Lines per page: large enough that a page is worth handing to a thread, small enough to share them out. */
const pageSize = 5000;

interface PageInFlight {
  readonly lines: readonly StoredEntryLineText[];
  readonly result: Promise<LineBlockTaskResult | null>;
}

/**
 * Verifies a run's stored lines in seq order, as the entry verifier's `checkLine` would one by one, with the
 * checks that need no other line done a page at a time (`checkTranscriptLineBlock`), on worker threads when
 * the run is large. Pages are joined in order into the longest prefix of lines that pass; from the first page
 * that does not pass as a whole on, the entry verifier checks line by line, and so names the first fault
 * exactly as it would have alone.
 */
export async function verifyStoredLines(
  store: RunStore,
  runId: string,
  header: TranscriptHeader,
  rawIndex: RawPayloadIndex,
  entryCount: number,
): Promise<StoredLinesVerification> {
  const binding: ChainBinding = {
    contractHash: header.contract_hash,
    adapterVersion: header.adapter_version,
    modelProfileId: header.model_profile_id,
  };
  let prefix: VerifiedPrefix = { lines: 0, headHash: header.genesis_hash };
  let verifier: TranscriptEntryVerifier | null = null;
  let pool: LineBlockPool | null = null;
  const inFlight: PageInFlight[] = [];

  async function settle(page: PageInFlight): Promise<VerificationFailure | null> {
    if (verifier === null) {
      const result = await page.result;
      const extended =
        result?.kind === "lines"
          ? extendVerifiedPrefix(prefix, result.result, rawIndex, page.lines.length)
          : null;
      if (extended !== null) {
        prefix = extended;
        return null;
      }
      verifier = createTranscriptEntryVerifier(header, rawIndex, prefix);
    }
    for (const stored of page.lines) {
      const failure = verifier.checkLine(stored.line, verifier.verified + 1);
      if (failure !== null) return failure;
    }
    return null;
  }

  function finish(failure: VerificationFailure | null): StoredLinesVerification {
    return {
      verified: verifier?.verified ?? prefix.lines,
      headHash: verifier?.headHash ?? prefix.headHash,
      failure,
    };
  }

  try {
    for await (const page of store.readEntryLineTexts(runId, { pageSize })) {
      let result: Promise<LineBlockTaskResult | null> = Promise.resolve(null);
      if (verifier === null) {
        const block = encodeLineBlock(page.map((stored) => stored.line));
        if (block !== null) {
          // The run record's entry count sizes the work before the pages are read.
          pool ??= createLineBlockPool((block.bytes.length / page.length) * entryCount);
          // The block's buffers are its own: handing them over moves no bytes.
          result = pool.run({ kind: "lines", ...block, binding }, [
            block.bytes.buffer as ArrayBuffer,
            block.lineEnds.buffer as ArrayBuffer,
          ]);
        }
      }
      inFlight.push({ lines: page, result });
      // Enough pages ahead to keep every thread busy while this one reads the next.
      while (inFlight.length > 2 * Math.max(pool?.workers ?? 0, 1) - 1) {
        const failure = await settle(inFlight.shift() as PageInFlight);
        if (failure !== null) return finish(failure);
      }
    }
    while (inFlight.length > 0) {
      const failure = await settle(inFlight.shift() as PageInFlight);
      if (failure !== null) return finish(failure);
    }
    return finish(null);
  } finally {
    pool?.close();
  }
}
