import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SecretRedactor } from "../../src/foundation/secret-redactor.js";
import type { SessionStateName, TranscriptEntryInput } from "../../src/session/transcript-sink.js";
import { createInMemoryTranscriptWriter } from "../../src/transcript/in-memory-transcript-writer.js";
import { createJsonlTranscriptWriter } from "../../src/transcript/jsonl-transcript-writer.js";
import { verifyEntries, verifyRunDirectory } from "../../src/transcript/verify-transcript.js";
import { startTranscript, temporaryDirectory } from "./transcript-fixtures.js";

const states: SessionStateName[] = [
  "PRECHECK",
  "INFER",
  "VALIDATE_CALLS",
  "EXECUTE",
  "OBSERVE",
  "COMMIT",
  "TERMINATE",
];

const entryArbitrary: fc.Arbitrary<TranscriptEntryInput> = fc.record({
  state: fc.constantFrom(...states),
  step_id: fc.string({ unit: "binary", maxLength: 20 }),
  turn: fc.nat(1_000),
  timestamp: fc.integer({ min: 0, max: 4_102_444_800_000 }),
  action: fc.jsonValue({ maxDepth: 3 }),
  result: fc.jsonValue({ maxDepth: 3 }),
  model_fingerprint: fc.option(fc.string({ unit: "grapheme", maxLength: 20 }), { nil: null }),
});

async function writeRun(
  runDirectory: string,
  inputs: readonly TranscriptEntryInput[],
  redactor: SecretRedactor,
) {
  const { transcript } = startTranscript({ writer: createJsonlTranscriptWriter(runDirectory), redactor });
  for (const input of inputs) transcript.append(input);
  await transcript.close();
  return transcript;
}

describe("transcript properties", () => {
  it("any sequence of appends verifies, on disk and in memory", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(entryArbitrary, fc.boolean()), { maxLength: 8 }),
        fc.string({ minLength: 4, maxLength: 8 }).map((text) => `secret-${text}`),
        async (drawn, secret) => {
          // Half the entries carry the secret, in a value and as a key.
          const inputs = drawn.map(([input, carriesSecret]) =>
            carriesSecret
              ? { ...input, action: { value: input.action, note: `uses ${secret}`, [secret]: 1 } }
              : input,
          );
          const redactor = new SecretRedactor();
          redactor.addSecret(secret, "SECRET");
          const directory = await temporaryDirectory();
          try {
            const transcript = await writeRun(join(directory.path, "run"), inputs, redactor);
            const text = await readFile(join(directory.path, "run", "transcript.jsonl"), "utf8");
            expect(text.includes(secret)).toBe(false);
            expect(await verifyRunDirectory(join(directory.path, "run"))).toEqual({
              ok: true,
              entries: inputs.length,
              head_hash: transcript.headHash,
              first_bad_entry: null,
            });
            const writer = createInMemoryTranscriptWriter();
            const { transcript: inMemory, contract } = startTranscript({ writer, redactor });
            for (const input of inputs) inMemory.append(input);
            expect(inMemory.headHash).toBe(transcript.headHash);
            expect(verifyEntries(writer.header!, contract, writer.entries, writer.raw).ok).toBe(true);
          } finally {
            await directory.remove();
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("any single-byte change in the transcript is detected", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(entryArbitrary, { minLength: 1, maxLength: 4 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 8 }),
        async (inputs, changes) => {
          const directory = await temporaryDirectory();
          try {
            const runDirectory = join(directory.path, "run");
            await writeRun(runDirectory, inputs, new SecretRedactor());
            const path = join(runDirectory, "transcript.jsonl");
            const original = await readFile(path);
            for (const [position, delta] of changes) {
              const changed = Buffer.from(original);
              const index = position % changed.length;
              // Adding 1..255 modulo 256 always gives a different byte.
              changed[index] = (changed[index]! + delta) % 256;
              await writeFile(path, changed);
              const report = await verifyRunDirectory(runDirectory);
              expect(report.ok, `byte ${index} changed to ${changed[index]}`).toBe(false);
            }
          } finally {
            await directory.remove();
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
