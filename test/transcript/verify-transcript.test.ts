import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { contentHash } from "../../src/foundation/content-hash.js";
import { createInMemoryTranscriptWriter } from "../../src/transcript/in-memory-transcript-writer.js";
import { createJsonlTranscriptWriter } from "../../src/transcript/jsonl-transcript-writer.js";
import type { TranscriptEntry } from "../../src/transcript/transcript-entry.js";
import { verifyEntries, verifyRunDirectory } from "../../src/transcript/verify-transcript.js";
import { entryInput, startTranscript, temporaryDirectory, writeRunDirectory } from "./transcript-fixtures.js";

let directory: { path: string; remove: () => Promise<void> };
let runDirectory: string;
beforeEach(async () => {
  directory = await temporaryDirectory();
  runDirectory = join(directory.path, "run_0001");
});
afterEach(async () => {
  await directory.remove();
});

const transcriptFile = () => join(runDirectory, "transcript.jsonl");

async function readLines(): Promise<string[]> {
  return (await readFile(transcriptFile(), "utf8")).split("\n").slice(0, -1);
}

async function writeLines(lines: readonly string[]): Promise<void> {
  await writeFile(transcriptFile(), lines.map((line) => `${line}\n`).join(""));
}

async function editEntry(seq: number, edit: (entry: Record<string, unknown>) => void): Promise<void> {
  const lines = await readLines();
  const entry = JSON.parse(lines[seq]!) as Record<string, unknown>;
  edit(entry);
  lines[seq] = JSON.stringify(entry);
  await writeLines(lines);
}

async function failureOf(): Promise<{ seq: number | null; reason: string }> {
  const report = await verifyRunDirectory(runDirectory);
  expect(report.ok).toBe(false);
  return { seq: report.first_bad_entry!.seq, reason: report.first_bad_entry!.reason_code };
}

describe("verifyRunDirectory", () => {
  it("passes a run as written and reports its head", async () => {
    const { transcript } = await writeRunDirectory(runDirectory, 12);
    const report = await verifyRunDirectory(runDirectory);
    expect(report).toEqual({ ok: true, entries: 12, head_hash: transcript.headHash, first_bad_entry: null });
  });

  it("passes an empty run at its genesis hash", async () => {
    const { transcript } = await writeRunDirectory(runDirectory, 0);
    expect(await verifyRunDirectory(runDirectory)).toEqual({
      ok: true,
      entries: 0,
      head_hash: transcript.header.genesis_hash,
      first_bad_entry: null,
    });
  });

  it("verifies a transcript longer than a read chunk, with a line longer than a chunk", async () => {
    const { transcript } = startTranscript({ writer: createJsonlTranscriptWriter(runDirectory) });
    for (let index = 0; index < 400; index++) {
      transcript.append(entryInput(index, { result: { output: `${index}`.padEnd(5_000, "é") } }));
    }
    transcript.append(entryInput(400, { result: { output: "x".repeat(1_500_000) } }));
    transcript.append(entryInput(401));
    await transcript.close();
    expect(await verifyRunDirectory(runDirectory)).toMatchObject({
      ok: true,
      entries: 402,
      head_hash: transcript.headHash,
    });
    // The same file, damaged near its end, is still read to the damage.
    const text = await readFile(transcriptFile(), "utf8");
    await writeFile(transcriptFile(), text.replace('"turn-401/execute"', '"turn-401/executf"'));
    expect(await failureOf()).toEqual({ seq: 401, reason: "CHAIN_LINK_MISMATCH" });
  });

  it("throws RUN_NOT_FOUND for a missing directory or one without a header", async () => {
    for (const path of [join(directory.path, "absent"), directory.path]) {
      let code: unknown;
      try {
        await verifyRunDirectory(path);
      } catch (error) {
        code = CharterError.isInstance(error) ? error.code : error;
      }
      expect(code).toBe("RUN_NOT_FOUND");
    }
  });

  it("names the entry whose result was edited", async () => {
    await writeRunDirectory(runDirectory, 8);
    await editEntry(5, (entry) => {
      entry.result = { status: "ok", output: "forged" };
    });
    const report = await verifyRunDirectory(runDirectory);
    expect(report.first_bad_entry).toMatchObject({
      seq: 5,
      step_id: "turn-5/execute",
      reason_code: "RESULT_HASH_MISMATCH",
    });
    expect(report.entries).toBe(5);
  });

  it("names the entry whose action was edited", async () => {
    await writeRunDirectory(runDirectory, 8);
    await editEntry(3, (entry) => {
      entry.action = { tool: "delete_everything" };
    });
    expect(await failureOf()).toEqual({ seq: 3, reason: "ACTION_HASH_MISMATCH" });
  });

  it("detects an edited field outside action and result at the chain link", async () => {
    await writeRunDirectory(runDirectory, 8);
    await editEntry(4, (entry) => {
      entry.timestamp = 0;
    });
    expect(await failureOf()).toEqual({ seq: 4, reason: "CHAIN_LINK_MISMATCH" });
  });

  it("detects an edited result whose result hash was recomputed, at the chain link", async () => {
    await writeRunDirectory(runDirectory, 8);
    await editEntry(6, (entry) => {
      // Keys in canonical order, so that the stored text is exactly what was hashed.
      entry.result = { output: "forged", status: "ok" };
      entry.result_hash = contentHash(entry.result);
    });
    expect(await failureOf()).toEqual({ seq: 6, reason: "CHAIN_LINK_MISMATCH" });
  });

  it("detects a deleted line as a sequence gap", async () => {
    await writeRunDirectory(runDirectory, 8);
    const lines = await readLines();
    lines.splice(2, 1);
    await writeLines(lines);
    expect(await failureOf()).toEqual({ seq: 3, reason: "SEQUENCE_GAP" });
  });

  it("detects a deleted line with renumbered entries as a broken link", async () => {
    await writeRunDirectory(runDirectory, 8);
    const lines = (await readLines()).filter((_, index) => index !== 2);
    await writeLines(lines.map((line, index) => line.replace(/"seq":\d+/, `"seq":${index}`)));
    expect(await failureOf()).toEqual({ seq: 2, reason: "CHAIN_LINK_MISMATCH" });
  });

  it("detects a deleted last line only against a recorded head", async () => {
    const { transcript } = await writeRunDirectory(runDirectory, 8);
    const lines = await readLines();
    await writeLines(lines.slice(0, -1));
    const report = await verifyRunDirectory(runDirectory);
    // A prefix of a chain is a valid chain: the head recorded elsewhere is what shows the loss.
    expect(report.ok).toBe(true);
    expect(report.head_hash).not.toBe(transcript.headHash);
  });

  it("reports a truncated last line as malformed", async () => {
    await writeRunDirectory(runDirectory, 8);
    const text = await readFile(transcriptFile(), "utf8");
    await writeFile(transcriptFile(), text.slice(0, text.length - 20));
    const report = await verifyRunDirectory(runDirectory);
    expect(report.first_bad_entry).toMatchObject({ seq: 7, reason_code: "MALFORMED_LINE" });
    expect(report.entries).toBe(7);
  });

  it("reports a last line without its newline as malformed, even when it parses", async () => {
    await writeRunDirectory(runDirectory, 3);
    const text = await readFile(transcriptFile(), "utf8");
    await writeFile(transcriptFile(), text.slice(0, -1));
    expect(await failureOf()).toEqual({ seq: 2, reason: "MALFORMED_LINE" });
  });

  it("reports a line that is not JSON", async () => {
    await writeRunDirectory(runDirectory, 4);
    const lines = await readLines();
    lines[1] = "{not json";
    await writeLines(lines);
    expect(await failureOf()).toEqual({ seq: 1, reason: "MALFORMED_LINE" });
  });

  it("reports bytes changed without changing the parsed values", async () => {
    await writeRunDirectory(runDirectory, 4);
    const lines = await readLines();
    // "\u006fk" parses to "ok", but it is not the text that was hashed.
    lines[1] = lines[1]!.replace('"status":"ok"', '"status":"\\u006fk"');
    expect(lines[1]).toContain("u006fk");
    await writeLines(lines);
    expect(await failureOf()).toEqual({ seq: 1, reason: "MALFORMED_LINE" });
  });

  it("detects an edited contract", async () => {
    await writeRunDirectory(runDirectory, 4);
    const path = join(runDirectory, "contract.json");
    const contract = JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>;
    contract.max_inferences = 1_000;
    await writeFile(path, JSON.stringify(contract));
    const report = await verifyRunDirectory(runDirectory);
    expect(report.first_bad_entry).toMatchObject({ seq: null, reason_code: "CONTRACT_HASH_MISMATCH" });
  });

  it("detects a missing contract", async () => {
    await writeRunDirectory(runDirectory, 2);
    await rm(join(runDirectory, "contract.json"));
    expect(await failureOf()).toEqual({ seq: null, reason: "CONTRACT_HASH_MISMATCH" });
  });

  it("detects a corrupted raw payload at the entry that references it", async () => {
    const { rawHashes } = await writeRunDirectory(runDirectory, 8);
    const response = rawHashes.get(4)!.response;
    await writeFile(join(runDirectory, "raw", `${response}.json`), '{"choices":[]}');
    const report = await verifyRunDirectory(runDirectory);
    expect(report.first_bad_entry).toMatchObject({
      seq: 4,
      step_id: "turn-4/infer",
      reason_code: "RAW_PAYLOAD_HASH_MISMATCH",
    });
  });

  it("detects a missing raw payload", async () => {
    const { rawHashes } = await writeRunDirectory(runDirectory, 8);
    await rm(join(runDirectory, "raw", `${rawHashes.get(2)!.request}.json`));
    expect(await failureOf()).toEqual({ seq: 2, reason: "RAW_PAYLOAD_MISSING" });
  });

  it("detects a corrupted raw payload no entry references", async () => {
    await writeRunDirectory(runDirectory, 2);
    await mkdir(join(runDirectory, "raw"), { recursive: true });
    await writeFile(join(runDirectory, "raw", `${"0".repeat(64)}.json`), "{}");
    expect(await failureOf()).toEqual({ seq: null, reason: "RAW_PAYLOAD_HASH_MISMATCH" });
  });

  it("refuses versions it does not know, in the header and in entries", async () => {
    await writeRunDirectory(runDirectory, 3);
    await editEntry(1, (entry) => {
      entry.v = 2;
    });
    expect(await failureOf()).toEqual({ seq: 1, reason: "UNSUPPORTED_VERSION" });
    const headerPath = join(runDirectory, "header.json");
    const header = JSON.parse(await readFile(headerPath, "utf8")) as Record<string, unknown>;
    await writeFile(headerPath, JSON.stringify({ ...header, v: 2 }));
    expect(await failureOf()).toEqual({ seq: null, reason: "UNSUPPORTED_VERSION" });
  });

  it("detects an edited header", async () => {
    await writeRunDirectory(runDirectory, 3);
    const headerPath = join(runDirectory, "header.json");
    const header = JSON.parse(await readFile(headerPath, "utf8")) as Record<string, unknown>;
    await writeFile(headerPath, JSON.stringify({ ...header, adapter_version: "adapter-2" }));
    expect(await failureOf()).toEqual({ seq: 0, reason: "CHAIN_LINK_MISMATCH" });
    await writeFile(headerPath, JSON.stringify({ ...header, run_id: "run_9999" }));
    expect(await failureOf()).toEqual({ seq: null, reason: "CHAIN_LINK_MISMATCH" });
    await writeFile(headerPath, "{");
    expect(await failureOf()).toEqual({ seq: null, reason: "MALFORMED_LINE" });
  });

  it("detects a line with an extra key", async () => {
    await writeRunDirectory(runDirectory, 3);
    await editEntry(2, (entry) => {
      entry.note = "added";
    });
    expect(await failureOf()).toEqual({ seq: 2, reason: "MALFORMED_LINE" });
  });

  it("reports a line that is not valid UTF-8", async () => {
    await writeRunDirectory(runDirectory, 3);
    const bytes = await readFile(transcriptFile());
    const secondLine = bytes.indexOf(0x0a) + 1;
    const position = bytes.indexOf(Buffer.from("contents of file 1"), secondLine);
    bytes[position] = 0xff;
    await writeFile(transcriptFile(), bytes);
    expect(await failureOf()).toEqual({ seq: 1, reason: "MALFORMED_LINE" });
  });
});

describe("verifyEntries", () => {
  function inMemoryRun() {
    const writer = createInMemoryTranscriptWriter();
    const { transcript, contract } = startTranscript({ writer });
    const raw = transcript.storeRaw({ request: true });
    transcript.append(entryInput(0, { action: { raw_request_hash: raw } }));
    transcript.append(entryInput(1));
    return { writer, contract, transcript, raw };
  }

  it("passes entries held in memory", () => {
    const { writer, contract, transcript } = inMemoryRun();
    expect(verifyEntries(writer.header!, contract, writer.entries, writer.raw)).toEqual({
      ok: true,
      entries: 2,
      head_hash: transcript.headHash,
      first_bad_entry: null,
    });
  });

  it("detects an edited entry, a wrong contract and a missing raw payload", () => {
    const { writer, contract, raw } = inMemoryRun();
    const edited: TranscriptEntry[] = [
      writer.entries[0]!,
      { ...writer.entries[1]!, result: { forged: true } },
    ];
    expect(verifyEntries(writer.header!, contract, edited, writer.raw).first_bad_entry).toMatchObject({
      seq: 1,
      reason_code: "RESULT_HASH_MISMATCH",
    });
    expect(
      verifyEntries(writer.header!, { ...contract, max_inferences: 99 }, writer.entries, writer.raw)
        .first_bad_entry,
    ).toMatchObject({ seq: null, reason_code: "CONTRACT_HASH_MISMATCH" });
    const withoutRaw = new Map([...writer.raw].filter(([hash]) => hash !== raw));
    expect(verifyEntries(writer.header!, contract, writer.entries, withoutRaw).first_bad_entry).toMatchObject(
      {
        seq: 0,
        reason_code: "RAW_PAYLOAD_MISSING",
      },
    );
  });
});
