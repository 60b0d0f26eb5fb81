import type { TranscriptEntryInput } from "../session/transcript-sink.js";
import type { TranscriptEntry, TranscriptHeader } from "./transcript-entry.js";

/**
 * Where a hash-chain transcript puts what it records. The transcript hands over finished, redacted,
 * hashed records; a writer only stores them (a run directory, memory...). Calls are synchronous and
 * must not block: a writer buffers and persists in the background, and `flush` waits for it.
 */
export interface TranscriptWriter {
  writeHeader(header: TranscriptHeader): void;
  /** The run's full execution contract, already checked against the header's contract hash. */
  writeContract(contract: unknown): void;
  /** `line` is the entry's JSON text followed by a newline, ready to append. */
  appendEntry(entry: TranscriptEntry, line: string): void;
  /** A raw provider payload: `json` is its canonical JSON, `hash` = BLAKE3(json). Written once per hash. */
  writeRaw(hash: string, json: string): void;
  /** Resolves when everything handed over so far is stored; rejects with the first storage failure. */
  flush(): Promise<void>;
  /** Flushes, then releases resources; the writer accepts nothing afterwards. */
  close(): Promise<void>;
  /**
   * Called once by the transcript the writer serves, with the transcript itself: a writer that keeps records beside
   * the chain (a run store) appends the entries binding them through it, so that they are chained like any other.
   */
  connect?(transcript: { append(entry: TranscriptEntryInput): string }): void;
}
