import { CharterError } from "../foundation/charter-error.js";
import type { TranscriptEntry, TranscriptHeader } from "./transcript-entry.js";
import type { TranscriptWriter } from "./transcript-writer.js";

export interface InMemoryTranscriptWriter extends TranscriptWriter {
  readonly header: TranscriptHeader | null;
  readonly contract: unknown;
  readonly entries: readonly TranscriptEntry[];
  /** The JSONL text a file writer would have appended, one string per entry (only with `keepLines`). */
  readonly lines: readonly string[];
  /** Raw payloads by content hash: their canonical JSON. */
  readonly raw: ReadonlyMap<string, string>;
}

/** A writer that keeps everything in memory, for tests, benchmarks and library callers without a disk. */
export function createInMemoryTranscriptWriter(
  options: { keepLines?: boolean } = {},
): InMemoryTranscriptWriter {
  const keepLines = options.keepLines === true;
  const entries: TranscriptEntry[] = [];
  const lines: string[] = [];
  const raw = new Map<string, string>();
  let header: TranscriptHeader | null = null;
  let contract: unknown = null;
  let closed = false;

  function accept(): void {
    if (closed) throw new CharterError("INTERNAL_ERROR", "the transcript writer is closed");
  }

  return {
    get header() {
      return header;
    },
    get contract() {
      return contract;
    },
    entries,
    lines,
    raw,
    writeHeader(value) {
      accept();
      header = value;
    },
    writeContract(value) {
      accept();
      contract = value;
    },
    appendEntry(entry, line) {
      accept();
      entries.push(entry);
      if (keepLines) lines.push(line);
    },
    writeRaw(hash, json) {
      accept();
      if (!raw.has(hash)) raw.set(hash, json);
    },
    flush: () => Promise.resolve(),
    async close() {
      closed = true;
    },
  };
}
