import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkRawPayloadFile,
  rawPayloadHashOfFileName,
} from "../../src/transcript/check-raw-payload-file.js";
import {
  checkTranscriptLineBlock,
  type LineBlock,
} from "../../src/transcript/check-transcript-line-block.js";
import { encodeLineBlock } from "../../src/transcript/encode-line-block.js";
import { createJsonlTranscriptWriter } from "../../src/transcript/jsonl-transcript-writer.js";
import type { TranscriptHeader } from "../../src/transcript/transcript-entry.js";
import {
  createTranscriptEntryVerifier,
  type RawPayloadIndex,
} from "../../src/transcript/transcript-entry-verifier.js";
import { entryInput, startTranscript, temporaryDirectory } from "./transcript-fixtures.js";

// The block check may refuse a line the entry verifier accepts (the verifier then checks it), never the reverse:
// a block that passes must be lines that `checkLine` passes, one by one, from the start.
let directory: { path: string; remove: () => Promise<void> };
let header: TranscriptHeader;
let transcriptText: string;
const rawIndex = new Map<string, boolean>();
/** The same, with the payload the last INFER entry (seq 9) references taken for corrupt. */
const rawIndexWithCorruptPayload = new Map<string, boolean>();
let corruptPayloadLine = 0;

beforeAll(async () => {
  directory = await temporaryDirectory();
  const runDirectory = join(directory.path, "run_0001");
  const { transcript } = startTranscript({ writer: createJsonlTranscriptWriter(runDirectory) });
  for (let index = 0; index < 10; index++) {
    if (index % 3 === 0) {
      const request = transcript.storeRaw({ messages: [{ role: "user", content: `ask ${index}` }] });
      const response = transcript.storeRaw({ choices: [{ message: { content: `answer ${index}` } }] });
      transcript.append(
        entryInput(index, {
          state: "INFER",
          step_id: `turn-${index}/infer`,
          action: { raw_request_hash: request, nested: [{ raw_request_hash: null }] },
          result: { raw_response_hash: response, status: "native" },
        }),
      );
    } else {
      // Escapes, text outside ASCII, and a raw reference key inside a string value.
      transcript.append(
        entryInput(index, {
          step_id: index % 2 === 0 ? `turn-${index}/"quoted"\\` : `turn-${index}/é`,
          result: { output: `"raw_request_hash": "résumé" ✓ 🙂 \n ${index}`, list: [1.5, -2, 1e21, null] },
        }),
      );
    }
  }
  await transcript.close();
  header = JSON.parse(await readFile(join(runDirectory, "header.json"), "utf8"));
  transcriptText = await readFile(join(runDirectory, "transcript.jsonl"), "utf8");
  const rawDirectory = join(runDirectory, "raw");
  for (const name of await readdir(rawDirectory)) {
    rawIndex.set(rawPayloadHashOfFileName(name), checkRawPayloadFile(rawDirectory, name).intact);
  }
  corruptPayloadLine = 9;
  const lastInfer = JSON.parse(transcriptText.split("\n")[corruptPayloadLine] as string);
  for (const [hash, intact] of rawIndex) rawIndexWithCorruptPayload.set(hash, intact);
  rawIndexWithCorruptPayload.set(lastInfer.result.raw_response_hash, false);
});

afterAll(async () => {
  await directory.remove();
});

const binding = () => ({
  contractHash: header.contract_hash,
  adapterVersion: header.adapter_version,
  modelProfileId: header.model_profile_id,
});

/** How many lines from the first `checkLine` passes. */
function linesTheVerifierPasses(lines: readonly string[], index: RawPayloadIndex): number {
  const verifier = createTranscriptEntryVerifier(header, index);
  for (const [index, line] of lines.entries()) if (verifier.checkLine(line, index + 1) !== null) break;
  return verifier.verified;
}

/**
 * How many lines from the first the block check passes, joined to the genesis hash: the lines before the one
 * it stopped at, up to the first that references a raw payload that is not intact.
 */
function linesTheBlockPasses(text: string, asStoredLines: boolean, index: RawPayloadIndex): number {
  let block: LineBlock | null = { bytes: new TextEncoder().encode(text), lineEnds: null };
  if (asStoredLines) block = encodeLineBlock(text.split("\n").slice(0, -1));
  if (block === null) return 0;
  const result = checkTranscriptLineBlock(block, binding());
  if (result.passed === 0 || result.firstSeq !== 0 || result.firstPrevHash !== header.genesis_hash) return 0;
  const broken = result.rawReferenceHashes.findIndex((hash) => index.get(hash) !== true);
  return broken === -1 ? result.passed : (result.rawReferenceLines[broken] as number);
}

const pieces = [
  '"',
  "\\",
  "\n",
  "\t",
  "r",
  "raw_re",
  '"raw_re',
  "0",
  "1",
  "-",
  ".",
  "e",
  "{",
  "}",
  "[",
  "]",
  ",",
  ":",
];
const mutation = fc.record({
  at: fc.nat(),
  remove: fc.nat({ max: 3 }),
  insert: fc.oneof(fc.constantFrom(...pieces, "é", "\u2028", "🙂", "\ud800"), fc.string({ maxLength: 3 })),
});

describe("checkTranscriptLineBlock", () => {
  it("passes every line of an intact transcript, as bytes and as stored lines", () => {
    const lines = transcriptText.split("\n").slice(0, -1);
    expect(linesTheVerifierPasses(lines, rawIndex)).toBe(lines.length);
    expect(linesTheBlockPasses(transcriptText, false, rawIndex)).toBe(lines.length);
    expect(linesTheBlockPasses(transcriptText, true, rawIndex)).toBe(lines.length);
  });

  it("stops at the line that references a corrupt raw payload", () => {
    const lines = transcriptText.split("\n").slice(0, -1);
    expect(linesTheVerifierPasses(lines, rawIndexWithCorruptPayload)).toBe(corruptPayloadLine);
    expect(linesTheBlockPasses(transcriptText, false, rawIndexWithCorruptPayload)).toBe(corruptPayloadLine);
    expect(linesTheBlockPasses(transcriptText, true, rawIndexWithCorruptPayload)).toBe(corruptPayloadLine);
  });

  it("never passes a line the entry verifier refuses", () => {
    fc.assert(
      fc.property(
        fc.array(mutation, { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        fc.boolean(),
        (edits, asStoredLines, withCorruptPayload) => {
          const index = withCorruptPayload ? rawIndexWithCorruptPayload : rawIndex;
          let text = transcriptText;
          for (const edit of edits) {
            const at = edit.at % (text.length + 1);
            text = text.slice(0, at) + edit.insert + text.slice(at + edit.remove);
          }
          const byBlock = linesTheBlockPasses(text, asStoredLines, index);
          expect(linesTheVerifierPasses(text.split("\n").slice(0, -1), index)).toBeGreaterThanOrEqual(
            byBlock,
          );
        },
      ),
      { numRuns: 3000, seed: 20261122 },
    );
  });
});
