import { describe, expect, it } from "vitest";
import {
  decodeCheckpointRecord,
  decodeRawRecord,
  decodeToolResultRecord,
  encodeRunSegment,
  segmentEntryLines,
  segmentRecords,
  splitNumbered,
} from "../../src/store/run-segment.js";

describe("run segment format", () => {
  const records = {
    entries: ['{"seq":4,"text":"line one\\nstill one"}', '{"seq":5,"text":"ünïcödé ✓"}'],
    rawPayloads: [{ hash: "a".repeat(64), json: '{"content":"with a space and a\\nnewline"}' }],
    accounting: [
      { position: 7, entry: { type: "llm", turn: 2, timestamp: 1 } as never },
      { position: 8, entry: { type: "tool", turn: 2, timestamp: 2 } as never },
    ],
    toolResults: [
      {
        position: 3,
        input: {
          turn: 2,
          callId: "call 1",
          toolName: "lookup",
          server: null,
          requestHash: "b".repeat(64),
          status: "ok",
          errorCode: null,
          result: { text: "two\nlines" },
        },
      },
    ],
    checkpoint: { seq: 5, turn: 2, document: { v: 2, note: "R not a payload\nC not a checkpoint" } },
  };

  it("reads back every record, in order, whatever its text holds", () => {
    const encoded = encodeRunSegment(records);
    expect(segmentEntryLines(encoded.entries)).toEqual(records.entries);
    expect(segmentRecords(encoded.records, "R").map(decodeRawRecord)).toEqual(records.rawPayloads);
    expect(segmentRecords(encoded.records, "A").map((record) => splitNumbered(record))).toEqual(
      records.accounting.map(({ position, entry }) => ({ number: position, rest: JSON.stringify(entry) })),
    );
    expect(segmentRecords(encoded.records, "T").map(decodeToolResultRecord)).toEqual(records.toolResults);
    expect(segmentRecords(encoded.records, "C").map(decodeCheckpointRecord)).toEqual([records.checkpoint]);
  });

  it("holds one line per entry and per record: no text contains a raw newline", () => {
    const encoded = encodeRunSegment(records);
    expect(encoded.entries.split("\n")).toHaveLength(2);
    expect(encoded.records.split("\n").map((line) => line[0])).toEqual(["R", "A", "A", "T", "C"]);
  });

  it("is empty for an empty batch, with no entries and no records of any tag", () => {
    const encoded = encodeRunSegment({
      entries: [],
      rawPayloads: [],
      accounting: [],
      toolResults: [],
      checkpoint: null,
    });
    expect(encoded).toEqual({ entries: "", records: "" });
    expect(segmentEntryLines(encoded.entries)).toEqual([]);
    for (const tag of ["R", "A", "T", "C"] as const) expect(segmentRecords(encoded.records, tag)).toEqual([]);
  });
});
