import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { blake3Hex } from "../../src/foundation/content-hash.js";
import { createJsonlTranscriptWriter } from "../../src/transcript/jsonl-transcript-writer.js";
import { entryInput, startTranscript, temporaryDirectory } from "./transcript-fixtures.js";

let directory: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  directory = await temporaryDirectory();
});
afterEach(async () => {
  await directory.remove();
});

async function codeOfRejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return CharterError.isInstance(error) ? error.code : error;
  }
  return "no error";
}

describe("createJsonlTranscriptWriter", () => {
  it("lays out a private run directory: 0700 directory, 0600 files", async () => {
    const runDirectory = join(directory.path, "runs", "run_0001");
    const { transcript, contract } = startTranscript({ writer: createJsonlTranscriptWriter(runDirectory) });
    const rawHash = transcript.storeRaw({ request: 1 });
    transcript.append(entryInput(0, { action: { raw_request_hash: rawHash } }));
    await transcript.close();

    expect((await readdir(runDirectory)).sort()).toEqual([
      "contract.json",
      "header.json",
      "raw",
      "transcript.jsonl",
    ]);
    expect((await stat(runDirectory)).mode & 0o777).toBe(0o700);
    expect((await stat(join(runDirectory, "raw"))).mode & 0o777).toBe(0o700);
    for (const file of ["contract.json", "header.json", "transcript.jsonl", `raw/${rawHash}.json`]) {
      expect((await stat(join(runDirectory, file))).mode & 0o777).toBe(0o600);
    }
    expect(JSON.parse(await readFile(join(runDirectory, "header.json"), "utf8"))).toEqual(transcript.header);
    expect(JSON.parse(await readFile(join(runDirectory, "contract.json"), "utf8"))).toEqual(contract);
    const raw = await readFile(join(runDirectory, "raw", `${rawHash}.json`), "utf8");
    expect(raw).toBe('{"request":1}');
    expect(blake3Hex(raw)).toBe(rawHash);
  });

  it("preserves order across many appends and flush makes the file complete", async () => {
    const runDirectory = join(directory.path, "run");
    const { transcript } = startTranscript({ writer: createJsonlTranscriptWriter(runDirectory) });
    const heads: string[] = [];
    for (let index = 0; index < 3_000; index++) {
      heads.push(transcript.append(entryInput(index)));
      // Yield now and then so that batches are written while appends continue.
      if (index % 97 === 0) await Promise.resolve();
      if (index % 1_000 === 999) await new Promise((resolve) => setImmediate(resolve));
    }
    await transcript.flush();
    const text = await readFile(join(runDirectory, "transcript.jsonl"), "utf8");
    expect(text.endsWith("\n")).toBe(true);
    const lines = text.slice(0, -1).split("\n");
    expect(lines).toHaveLength(3_000);
    const entries = lines.map((line) => JSON.parse(line) as { seq: number; hash: string; prev_hash: string });
    expect(entries.map((entry) => entry.seq)).toEqual(heads.map((_, index) => index));
    expect(entries.map((entry) => entry.hash)).toEqual(heads);
    for (let index = 1; index < entries.length; index++)
      expect(entries[index]!.prev_hash).toBe(entries[index - 1]!.hash);
    await transcript.close();
  });

  it("writes each raw payload once", async () => {
    const runDirectory = join(directory.path, "run");
    const { transcript } = startTranscript({ writer: createJsonlTranscriptWriter(runDirectory) });
    const first = transcript.storeRaw({ same: true });
    const second = transcript.storeRaw({ same: true });
    const other = transcript.storeRaw({ same: false });
    await transcript.close();
    expect(second).toBe(first);
    expect((await readdir(join(runDirectory, "raw"))).sort()).toEqual(
      [`${first}.json`, `${other}.json`].sort(),
    );
  });

  it("syncs to disk when durable", async () => {
    const runDirectory = join(directory.path, "run");
    const { transcript } = startTranscript({
      writer: createJsonlTranscriptWriter(runDirectory, { durable: true }),
    });
    transcript.append(entryInput(0));
    await transcript.flush();
    const text = await readFile(join(runDirectory, "transcript.jsonl"), "utf8");
    expect(text.split("\n")).toHaveLength(2);
    await transcript.close();
  });

  it("refuses a directory that already holds a run", async () => {
    const runDirectory = join(directory.path, "run");
    await startTranscript({ writer: createJsonlTranscriptWriter(runDirectory) }).transcript.close();
    const second = startTranscript({ writer: createJsonlTranscriptWriter(runDirectory) }).transcript;
    expect(await codeOfRejection(second.flush())).toBe("ARGUMENT_INVALID");
    await second.close().catch(() => undefined);
  });

  it("reports a storage failure on flush and refuses further entries", async () => {
    const blocker = join(directory.path, "a-file");
    await writeFile(blocker, "not a directory");
    const { transcript } = startTranscript({ writer: createJsonlTranscriptWriter(join(blocker, "run")) });
    transcript.append(entryInput(0));
    expect(await codeOfRejection(transcript.flush())).toBe("INTERNAL_ERROR");
    let appendCode: unknown;
    try {
      transcript.append(entryInput(1));
    } catch (error) {
      appendCode = CharterError.isInstance(error) ? error.code : error;
    }
    expect(appendCode).toBe("INTERNAL_ERROR");
    expect(await codeOfRejection(transcript.close())).toBe("INTERNAL_ERROR");
  });

  it("accepts nothing once closed", async () => {
    const runDirectory = join(directory.path, "run");
    const { transcript } = startTranscript({ writer: createJsonlTranscriptWriter(runDirectory) });
    await transcript.close();
    await transcript.close();
    let code: unknown;
    try {
      transcript.append(entryInput(0));
    } catch (error) {
      code = CharterError.isInstance(error) ? error.code : error;
    }
    expect(code).toBe("INTERNAL_ERROR");
  });
});
