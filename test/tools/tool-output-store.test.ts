import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { createToolOutputStore, type ToolOutputStore } from "../../src/tools/tool-output-store.js";

const scratch = mkdtempSync(join(tmpdir(), "charter-store-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const text = Array.from({ length: 30 }, (_, index) => `entry ${index + 1}: value=${(index + 1) * 7}`).join(
  "\n",
);

async function codeOf(action: () => Promise<unknown>): Promise<string> {
  const error = await action().then(
    () => null,
    (rejection: unknown) => rejection,
  );
  if (!CharterError.isInstance(error)) throw new Error(`expected a CharterError, got ${String(error)}`);
  return error.code;
}

describe("createToolOutputStore", () => {
  it("stores outputs under <base>/charter-<runHash>/ with mode 0600 and sequential handles", async () => {
    const store = createToolOutputStore({
      runHash: "abc123",
      baseDirectory: scratch,
      countTokens: (value) => value.split(/\s+/).length,
    });
    expect(store.directory).toBe(join(scratch, "charter-abc123"));
    const first = await store.store(text, { toolName: "fs__read", callId: "call_1" });
    expect(first).toEqual({
      handle: "out-1",
      bytes: Buffer.byteLength(text),
      lines: 30,
      tokens: text.split(/\s+/).length,
    });
    const second = await store.store("one line\n", { toolName: "fs__read", callId: "call_2" });
    expect(second).toMatchObject({ handle: "out-2", lines: 1 });

    const path = join(store.directory, "out-1.txt");
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(store.directory).mode & 0o777).toBe(0o700);
    const index = readFileSync(join(store.directory, "index.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(index.map((entry) => [entry.handle, entry.toolName, entry.callId])).toEqual([
      ["out-1", "fs__read", "call_1"],
      ["out-2", "fs__read", "call_2"],
    ]);
  });

  it("never overwrites an output left under the same run hash", async () => {
    const earlier = createToolOutputStore({ runHash: "reused", baseDirectory: scratch });
    await earlier.store("earlier", { toolName: "t", callId: "c1" });
    const later = createToolOutputStore({ runHash: "reused", baseDirectory: scratch });
    const stored = await later.store("later", { toolName: "t", callId: "c2" });
    expect(stored.handle).toBe("out-2");
    expect((await later.read("out-1")).lines).toEqual(["earlier"]);
  });

  it("estimates tokens as bytes / 4 without a counter", async () => {
    const store = createToolOutputStore({ runHash: "estimate", baseDirectory: scratch });
    expect((await store.store("x".repeat(401), { toolName: "t", callId: "c" })).tokens).toBe(101);
  });

  it("reads line ranges, 1-based and inclusive, clamped to the output", async () => {
    const store = createToolOutputStore({ runHash: "reads", baseDirectory: scratch });
    const { handle } = await store.store(text, { toolName: "t", callId: "c" });
    const middle = await store.read(handle, { startLine: 3, endLine: 5 });
    expect(middle).toMatchObject({ startLine: 3, endLine: 5, totalLines: 30 });
    expect(middle.lines).toEqual(["entry 3: value=21", "entry 4: value=28", "entry 5: value=35"]);
    expect((await store.read(handle, { startLine: 29, endLine: 99 })).lines).toEqual([
      "entry 29: value=203",
      "entry 30: value=210",
    ]);
    expect((await store.read(handle, { startLine: 40 })).lines).toEqual([]);
    expect((await store.read(handle)).lines).toHaveLength(30);
  });

  it("greps literally by default, by regular expression on request, bounded by maxMatches", async () => {
    const store = createToolOutputStore({ runHash: "greps", baseDirectory: scratch });
    const { handle } = await store.store("a.b\naxb\nA.B\na.b again\n", { toolName: "t", callId: "c" });
    const literal = await store.grep(handle, "a.b");
    expect(literal.matches).toEqual([
      { line: 1, text: "a.b" },
      { line: 4, text: "a.b again" },
    ]);
    const regex = await store.grep(handle, "^a.b", { regex: true, maxMatches: 2 });
    expect(regex.totalMatches).toBe(3);
    expect(regex.matches.map((match) => match.line)).toEqual([1, 2]);
    expect(await codeOf(() => store.grep(handle, "(", { regex: true }))).toBe("TOOL_INPUT_INVALID");
  });

  describe("handle validation", () => {
    let store: ToolOutputStore;
    const outside = join(scratch, "secret.txt");

    it("refuses path traversal, absolute paths and malformed handles with TOOL_OUTPUT_HANDLE_INVALID", async () => {
      writeFileSync(outside, "top secret\n");
      store = createToolOutputStore({ runHash: "guarded", baseDirectory: scratch });
      await store.store("inside\n", { toolName: "t", callId: "c" });
      const attempts = [
        "../secret",
        "../secret.txt",
        "../../etc/passwd",
        outside,
        "/etc/passwd",
        "out-1/../../secret",
        "out-1.txt",
        "out-1\u0000",
        "./out-1",
        "out-0",
        "out-01",
        "..",
        "",
        "OUT-1",
      ];
      for (const handle of attempts) {
        expect(await codeOf(() => store.read(handle))).toBe("TOOL_OUTPUT_HANDLE_INVALID");
        expect(await codeOf(() => store.grep(handle, "secret"))).toBe("TOOL_OUTPUT_HANDLE_INVALID");
      }
      expect((await store.read("out-1")).lines).toEqual(["inside"]);
    });

    it("refuses a well-formed handle that was never stored", async () => {
      expect(await codeOf(() => store.read("out-99"))).toBe("TOOL_OUTPUT_HANDLE_INVALID");
    });
  });

  describe("symbolic links and handles the run never issued", () => {
    const outside = join(scratch, "planted-secret.txt");

    it("never follows a symbolic link planted in place of a stored output", async () => {
      writeFileSync(outside, "top secret\n");
      const store = createToolOutputStore({ runHash: "linked", baseDirectory: scratch });
      await store.store("inside\n", { toolName: "t", callId: "c" });
      const path = join(store.directory, "out-1.txt");
      unlinkSync(path);
      symlinkSync(outside, path);
      expect(await codeOf(() => store.read("out-1"))).toBe("TOOL_OUTPUT_HANDLE_INVALID");
      expect(await codeOf(() => store.grep("out-1", "secret"))).toBe("TOOL_OUTPUT_HANDLE_INVALID");
    });

    it("serves no output the run did not store, even when a file with a handle's name is there", async () => {
      const store = createToolOutputStore({ runHash: "planted", baseDirectory: scratch });
      await store.store("mine\n", { toolName: "t", callId: "c" });
      writeFileSync(join(store.directory, "out-7.txt"), "planted\n");
      symlinkSync(outside, join(store.directory, "out-8.txt"));
      expect(await codeOf(() => store.read("out-7"))).toBe("TOOL_OUTPUT_HANDLE_INVALID");
      expect(await codeOf(() => store.read("out-8"))).toBe("TOOL_OUTPUT_HANDLE_INVALID");
      // A later process continuing the run (a resume) still serves what the run stored, from its index.
      const resumed = createToolOutputStore({ runHash: "planted", baseDirectory: scratch });
      expect((await resumed.read("out-1")).lines).toEqual(["mine"]);
      expect(await codeOf(() => resumed.read("out-7"))).toBe("TOOL_OUTPUT_HANDLE_INVALID");
    });

    it("never writes through a symbolic link planted as the index or as the folder", async () => {
      const store = createToolOutputStore({ runHash: "linked-index", baseDirectory: scratch });
      mkdirSync(store.directory, { mode: 0o700 });
      const target = join(scratch, "index-target.txt");
      writeFileSync(target, "");
      symlinkSync(target, join(store.directory, "index.jsonl"));
      await expect(store.store("x", { toolName: "t", callId: "c" })).rejects.toMatchObject({ code: "ELOOP" });
      expect(readFileSync(target, "utf8")).toBe("");

      const elsewhere = mkdtempSync(join(scratch, "elsewhere-"));
      symlinkSync(elsewhere, join(scratch, "charter-linked-folder"));
      const linked = createToolOutputStore({ runHash: "linked-folder", baseDirectory: scratch });
      expect(await codeOf(() => linked.store("x", { toolName: "t", callId: "c" }))).toBe(
        "TOOL_OUTPUT_FOLDER_UNSAFE",
      );
      expect(() => statSync(join(elsewhere, "out-1.txt"))).toThrow();
    });

    it("makes a folder left readable by others private again before storing in it", async () => {
      const store = createToolOutputStore({ runHash: "opened", baseDirectory: scratch });
      mkdirSync(store.directory, { mode: 0o755 });
      chmodSync(store.directory, 0o755);
      await store.store("x", { toolName: "t", callId: "c" });
      expect(statSync(store.directory).mode & 0o777).toBe(0o700);
      expect(statSync(join(store.directory, "out-1.txt")).mode & 0o777).toBe(0o600);
      expect(statSync(join(store.directory, "index.jsonl")).mode & 0o777).toBe(0o600);
    });
  });

  it("writes each output through its redactor: no secret is stored in clear", async () => {
    const store = createToolOutputStore({
      runHash: "redacted",
      baseDirectory: scratch,
      redact: (value) => value.replaceAll("sk-secret-42", "[REDACTED:KEY]"),
    });
    const { handle } = await store.store("key=sk-secret-42\nnext", { toolName: "t", callId: "c" });
    expect(readFileSync(join(store.directory, `${handle}.txt`), "utf8")).toBe("key=[REDACTED:KEY]\nnext");
    expect((await store.grep(handle, "sk-secret")).totalMatches).toBe(0);
  });

  it("refuses a run hash that could leave the base directory", () => {
    for (const runHash of ["../escape", "a/b", "", "x".repeat(129)]) {
      let code: string | null = null;
      try {
        createToolOutputStore({ runHash, baseDirectory: scratch });
      } catch (error) {
        code = CharterError.isInstance(error) ? error.code : "not a CharterError";
      }
      expect(code).toBe("CONFIGURATION_INVALID");
    }
  });

  it("defaults to the system temporary directory, honouring TMPDIR", async () => {
    const custom = mkdtempSync(join(scratch, "tmpdir-"));
    const previous = process.env.TMPDIR;
    process.env.TMPDIR = custom;
    try {
      const store = createToolOutputStore({ runHash: "honoured" });
      expect(store.directory).toBe(join(custom, "charter-honoured"));
      await store.store("kept", { toolName: "t", callId: "c" });
      expect(readFileSync(join(custom, "charter-honoured", "out-1.txt"), "utf8")).toBe("kept");
    } finally {
      if (previous === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previous;
    }
  });

  it("removes its directory", async () => {
    const store = createToolOutputStore({ runHash: "removed", baseDirectory: scratch });
    await store.store("gone soon", { toolName: "t", callId: "c" });
    await store.remove();
    expect(() => statSync(store.directory)).toThrow();
  });
});
