import type { TranscriptEntry, TranscriptHeader } from "./transcript-entry.js";
import type { TranscriptWriter } from "./transcript-writer.js";

/** Hands every record to several writers (a run directory and a run store, say), in order. */
export function createTeeTranscriptWriter(writers: readonly TranscriptWriter[]): TranscriptWriter {
  return {
    writeHeader(header: TranscriptHeader) {
      for (const writer of writers) writer.writeHeader(header);
    },
    writeContract(contract: unknown) {
      for (const writer of writers) writer.writeContract(contract);
    },
    appendEntry(entry: TranscriptEntry, line: string) {
      for (const writer of writers) writer.appendEntry(entry, line);
    },
    writeRaw(hash: string, json: string) {
      for (const writer of writers) writer.writeRaw(hash, json);
    },
    async flush() {
      await Promise.all(writers.map((writer) => writer.flush()));
    },
    async close() {
      await Promise.all(writers.map((writer) => writer.close()));
    },
    connect(transcript) {
      for (const writer of writers) writer.connect?.(transcript);
    },
  };
}
