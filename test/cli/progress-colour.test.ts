import { describe, expect, it } from "vitest";
import { colourWanted, progressWanted } from "../../src/cli/progress-reporter.js";

const terminal = { isTTY: true, hasColors: () => true };
const monochromeTerminal = { isTTY: true, hasColors: () => false };
const pipe = { isTTY: false };

describe("when progress is shown, and in colour", () => {
  it("colour on a terminal that has colours, never with NO_COLOR, always with FORCE_COLOR (but NO_COLOR wins)", () => {
    expect(colourWanted(terminal, {})).toBe(true);
    expect(colourWanted(monochromeTerminal, {})).toBe(false);
    expect(colourWanted(pipe, {})).toBe(false);
    expect(colourWanted(terminal, { NO_COLOR: "1" })).toBe(false);
    // An empty NO_COLOR is "not set" (no-color.org).
    expect(colourWanted(terminal, { NO_COLOR: "" })).toBe(true);
    expect(colourWanted(pipe, { FORCE_COLOR: "1" })).toBe(true);
    expect(colourWanted(terminal, { FORCE_COLOR: "0" })).toBe(false);
    expect(colourWanted(pipe, { FORCE_COLOR: "1", NO_COLOR: "1" })).toBe(false);
  });

  it("progress on a terminal unless --json; with --progress or --verbose whatever stderr is", () => {
    expect(progressWanted(terminal, {})).toBe(true);
    expect(progressWanted(terminal, { json: true })).toBe(false);
    expect(progressWanted(pipe, {})).toBe(false);
    expect(progressWanted(pipe, { progress: true })).toBe(true);
    expect(progressWanted(pipe, { json: true, verbose: true })).toBe(true);
  });
});
