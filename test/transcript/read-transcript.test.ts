import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { readRawPayload, readRunDirectory } from "../../src/transcript/read-transcript.js";
import { defaultRunDirectory } from "../../src/transcript/run-directory-layout.js";
import { temporaryDirectory, writeRunDirectory } from "./transcript-fixtures.js";

let directory: { path: string; remove: () => Promise<void> };
let runDirectory: string;
beforeEach(async () => {
  directory = await temporaryDirectory();
  runDirectory = join(directory.path, "run_0001");
});
afterEach(async () => {
  await directory.remove();
});

async function codeOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return CharterError.isInstance(error) ? error.code : error;
  }
  return "no error";
}

describe("readRunDirectory", () => {
  it("reads back the header, the contract and every entry", async () => {
    const { transcript, rawHashes } = await writeRunDirectory(runDirectory, 5);
    const run = await readRunDirectory(runDirectory);
    expect(run.header).toEqual(transcript.header);
    expect(run.contract?.contract_hash).toBe(transcript.header.contract_hash);
    expect(run.entries.map((entry) => entry.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(run.entries.at(-1)!.hash).toBe(transcript.headHash);
    expect(run.incompleteLastLine).toBe(false);
    expect(await readRawPayload(runDirectory, rawHashes.get(2)!.request)).toEqual({
      model: "scripted",
      messages: [{ role: "user", content: "ask 2" }],
    });
  });

  it("reads a run cut off mid-line, leaving out the partial line", async () => {
    await writeRunDirectory(runDirectory, 3);
    const path = join(runDirectory, "transcript.jsonl");
    const text = await readFile(path, "utf8");
    await writeFile(path, text.slice(0, -10));
    const run = await readRunDirectory(runDirectory);
    expect(run.entries).toHaveLength(2);
    expect(run.incompleteLastLine).toBe(true);
  });

  it("reports where a run is not in its format", async () => {
    await writeRunDirectory(runDirectory, 3);
    const path = join(runDirectory, "transcript.jsonl");
    const lines = (await readFile(path, "utf8")).split("\n");
    lines[1] = '{"v":1}';
    await writeFile(path, lines.join("\n"));
    let details: unknown;
    try {
      await readRunDirectory(runDirectory);
    } catch (error) {
      expect(CharterError.isInstance(error) && error.code).toBe("TRANSCRIPT_INVALID");
      details = CharterError.isInstance(error) ? error.details : null;
    }
    expect(details).toMatchObject({ path, line: 2 });
  });

  it("throws RUN_NOT_FOUND where there is no run", async () => {
    expect(await codeOf(readRunDirectory(join(directory.path, "absent")))).toBe("RUN_NOT_FOUND");
    await mkdir(runDirectory);
    expect(await codeOf(readRunDirectory(runDirectory))).toBe("RUN_NOT_FOUND");
  });

  it("refuses a raw payload name that is not a hash", async () => {
    await writeRunDirectory(runDirectory, 1);
    expect(await codeOf(readRawPayload(runDirectory, "../header"))).toBe("ARGUMENT_INVALID");
    expect(await codeOf(readRawPayload(runDirectory, "a".repeat(64)))).toBe("TRANSCRIPT_INVALID");
  });
});

describe("defaultRunDirectory", () => {
  it("is ~/.charter/runs/<run-id> and refuses ids that are paths", () => {
    expect(defaultRunDirectory("run_0001", "/home/user")).toBe("/home/user/.charter/runs/run_0001");
    for (const bad of ["../escape", "a/b", "", ".hidden", "x..y"]) {
      let code: unknown;
      try {
        defaultRunDirectory(bad, "/home/user");
      } catch (error) {
        code = CharterError.isInstance(error) ? error.code : error;
      }
      expect(code, bad).toBe("ARGUMENT_INVALID");
    }
  });
});
