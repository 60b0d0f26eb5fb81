import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadEnvFile, parseEnvFile } from "../../src/config/env-file.js";
import { CharterError } from "../../src/foundation/charter-error.js";

const file = "/project/.charter.env";

function parseFailure(text: string): CharterError {
  try {
    parseEnvFile(text, file);
  } catch (error) {
    if (CharterError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected parseEnvFile to throw");
}

describe("parseEnvFile", () => {
  it("reads assignments, comments, export, quotes and escapes", () => {
    const text = [
      "# a comment",
      "",
      "PLAIN=value",
      "SPACED = spaced value  ",
      "export EXPORTED=yes",
      "SINGLE='literal $HOME \\n # not a comment'",
      'DOUBLE="line\\nbreak \\"quoted\\" back\\\\slash"',
      "WITH_COMMENT=abc # trailing comment",
      "HASH_INSIDE=abc#def",
      "EMPTY=",
      'EMPTY_QUOTED=""',
      "QUOTED_THEN_COMMENT='x' # note",
      "EQUALS=a=b=c",
      "  INDENTED=ok",
    ].join("\n");
    expect(Object.fromEntries(parseEnvFile(text, file))).toEqual({
      PLAIN: "value",
      SPACED: "spaced value",
      EXPORTED: "yes",
      SINGLE: "literal $HOME \\n # not a comment",
      DOUBLE: 'line\nbreak "quoted" back\\slash',
      WITH_COMMENT: "abc",
      HASH_INSIDE: "abc#def",
      EMPTY: "",
      EMPTY_QUOTED: "",
      QUOTED_THEN_COMMENT: "x",
      EQUALS: "a=b=c",
      INDENTED: "ok",
    });
  });

  it("lets a later assignment of a key win and accepts CRLF", () => {
    expect(parseEnvFile("A=1\r\nA=2\r\n", file).get("A")).toBe("2");
  });

  it.each([
    ["no equals sign", "A=1\nJUST_A_WORD\n", 2],
    ["invalid key", "A=1\nB=2\n1BAD=3", 3],
    ["unterminated double quote", 'A="open', 1],
    ["unterminated single quote", "\n\nA='open", 3],
    ["text after the closing quote", 'A="x" y', 1],
    ["missing key", "=value", 1],
  ])("names the file and line of a malformed line (%s)", (_case, text, line) => {
    const error = parseFailure(text);
    expect(error.code).toBe("CONFIGURATION_INVALID");
    expect(error.details).toEqual({ file, line });
  });
});

describe("loadEnvFile", () => {
  it("reads a real file and treats a missing one as absent", async () => {
    const directory = await mkdtemp(join(tmpdir(), "charter-env-"));
    try {
      const path = join(directory, ".charter.env");
      expect(await loadEnvFile(path)).toBeNull();
      await writeFile(path, "TOKEN=abc\n");
      expect(Object.fromEntries((await loadEnvFile(path)) ?? [])).toEqual({ TOKEN: "abc" });
      await expect(loadEnvFile(directory)).rejects.toMatchObject({
        code: "CONFIGURATION_INVALID",
        details: { file: directory, reason: "EISDIR" },
      });
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
