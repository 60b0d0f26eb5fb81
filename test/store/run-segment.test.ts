import { describe, expect, it } from "vitest";
import {
  decodeCheckpointRecord,
  decodeRawRecord,
  decodeToolResultRecord,
  encodeRunSegment,
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
    checkpoint: { seq: 5, turn: 2, document: { v: 2, note: "E not an entry\nC not a checkpoint" } },
  };

  it("reads back every record, in order, whatever its text holds", () => {
    const body = encodeRunSegment(records);
    expect(segmentRecords(body, "E")).toEqual(records.entries);
    expect(segmentRecords(body, "R").map(decodeRawRecord)).toEqual(records.rawPayloads);
    expect(segmentRecords(body, "A").map((record) => splitNumbered(record))).toEqual(
      records.accounting.map(({ position, entry }) => ({ number: position, rest: JSON.stringify(entry) })),
    );
    expect(segmentRecords(body, "T").map(decodeToolResultRecord)).toEqual(records.toolResults);
    expect(segmentRecords(body, "C").map(decodeCheckpointRecord)).toEqual([records.checkpoint]);
  });

  it("holds one line per record: no record text contains a raw newline", () => {
    const body = encodeRunSegment(records);
    expect(body.split("\n")).toHaveLength(2 + 1 + 2 + 1 + 1);
    expect(body.split("\n").map((line) => line[0])).toEqual(["E", "E", "R", "A", "A", "T", "C"]);
  });

  it("is empty for an empty batch, with no records of any tag", () => {
    const body = encodeRunSegment({
      entries: [],
      rawPayloads: [],
      accounting: [],
      toolResults: [],
      checkpoint: null,
    });
    expect(body).toBe("");
    for (const tag of ["E", "R", "A", "T", "C"] as const) expect(segmentRecords(body, tag)).toEqual([]);
  });
});
