import { describe, expect, it } from "vitest";
import { createToolNameFilter } from "../../src/tools/tool-name-filter.js";

describe("toolsAllowed and toolsDenied patterns", () => {
  it("expose every tool when there are no patterns", () => {
    expect(createToolNameFilter({})("anything")).toBe(true);
    expect(createToolNameFilter({ toolsAllowed: null, toolsDenied: null })("anything")).toBe(true);
  });

  it("match whole names, with * for any run of characters and ? for exactly one", () => {
    const exposes = createToolNameFilter({ toolsAllowed: ["read_*", "get_?", "exact"] });
    expect(["read_file", "read_", "get_a", "exact"].map((name) => exposes(name))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(["unread_file", "get_ab", "get_", "exactly", "Exact"].map((name) => exposes(name))).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it("take every other character literally, regular-expression characters included", () => {
    const exposes = createToolNameFilter({ toolsAllowed: ["a.b", "c+(d)", "[x]"] });
    expect(exposes("a.b")).toBe(true);
    expect(exposes("axb")).toBe(false);
    expect(exposes("c+(d)")).toBe(true);
    expect(exposes("ccd")).toBe(false);
    expect(exposes("[x]")).toBe(true);
    expect(exposes("x")).toBe(false);
  });

  it("let toolsDenied win, and match any of a tool's names", () => {
    const exposes = createToolNameFilter({ toolsAllowed: ["*"], toolsDenied: ["files__write_*", "delete"] });
    expect(exposes("write_file", "files__write_file")).toBe(false);
    expect(exposes("delete", "files__delete")).toBe(false);
    expect(exposes("read_file", "files__read_file")).toBe(true);
  });
});
