import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/foundation/canonical-json.js";
import type { SessionStateName } from "../../src/session/transcript-sink.js";
import { encodeChainLink } from "../../src/transcript/chain-link-hash.js";
import type { TranscriptEntry } from "../../src/transcript/transcript-entry.js";
import { formatTranscriptLine, parseTranscriptLine } from "../../src/transcript/transcript-line.js";

const hex = fc.stringMatching(/^[0-9a-f]{64}$/);
const entryArbitrary: fc.Arbitrary<TranscriptEntry> = fc.record({
  v: fc.constant(1 as const),
  seq: fc.nat(),
  step_id: fc.string({ unit: "binary", maxLength: 16 }),
  state: fc.constantFrom<SessionStateName>("INFER", "EXECUTE", "COMMIT"),
  turn: fc.oneof(fc.nat(), fc.double({ noNaN: true, noDefaultInfinity: true })),
  timestamp: fc.oneof(fc.nat(), fc.double({ noNaN: true, noDefaultInfinity: true })),
  action: fc.jsonValue({ maxDepth: 3 }),
  result: fc.jsonValue({ maxDepth: 3 }),
  action_hash: hex,
  result_hash: hex,
  model_fingerprint: fc.option(fc.string({ unit: "binary", maxLength: 16 }), { nil: null }),
  prev_hash: hex,
  hash: hex,
});

function linkOf(entry: TranscriptEntry) {
  return encodeChainLink({ ...entry, prev: entry.prev_hash });
}

function lineOf(entry: TranscriptEntry): string {
  return formatTranscriptLine(
    linkOf(entry),
    canonicalJson(entry.action),
    canonicalJson(entry.result),
    entry.hash,
  ).slice(0, -1);
}

describe("transcript lines", () => {
  it("are JSON of the entry, and parse back to the link's member texts and the stored texts", () => {
    fc.assert(
      fc.property(entryArbitrary, (entry) => {
        const line = lineOf(entry);
        expect(line.includes("\n")).toBe(false);
        expect(JSON.parse(line)).toEqual(JSON.parse(JSON.stringify(entry)));
        expect(parseTranscriptLine(line)).toEqual({
          seq: entry.seq,
          link: linkOf(entry),
          actionJson: canonicalJson(entry.action),
          resultJson: canonicalJson(entry.result),
          hash: entry.hash,
        });
      }),
    );
  });

  it("accept only the exact spelling the writer produces", () => {
    const entry: TranscriptEntry = {
      v: 1,
      seq: 2,
      step_id: "turn-1/infer",
      state: "INFER",
      turn: 1,
      timestamp: 1000,
      action: { a: 1 },
      result: "ok",
      action_hash: "a".repeat(64),
      result_hash: "b".repeat(64),
      model_fingerprint: "local/model",
      prev_hash: "c".repeat(64),
      hash: "d".repeat(64),
    };
    const line = lineOf(entry);
    expect(parseTranscriptLine(line)).not.toBeNull();
    const respellings = [
      line.replace('"turn":1,', '"turn":1.0,'),
      line.replace('"timestamp":1000,', '"timestamp":1e3,'),
      line.replace('"seq":2,', '"seq":02,'),
      line.replace('"turn":1,', '"turn":-0,'),
      line.replace('"turn-1/infer"', '"turn-1\\/infer"'),
      line.replace('"local/model"', '"local\\u002fmodel"'),
      line.replace('{"v":1,', '{ "v":1,'),
      line.replace('{"v":1,', '{"v":2,'),
      `${line} `,
      line.replace('"model_fingerprint":"local/model"', '"model_fingerprint":nul'),
    ];
    for (const respelled of respellings) {
      expect(respelled).not.toBe(line);
      expect(parseTranscriptLine(respelled), respelled).toBeNull();
    }
  });
});
