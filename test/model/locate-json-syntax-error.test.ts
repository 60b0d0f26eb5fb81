import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { locateJsonSyntaxError } from "../../src/model/locate-json-syntax-error.js";

describe("locateJsonSyntaxError", () => {
  it.each([
    ['{"a": 1,}', 8],
    ['{"a" 1}', 5],
    ["[1, 2", 5],
    ['{"a": tru}', 9],
    ["nul", 3],
    ['"abc', 4],
    ['{"a":1}}', 7],
    ["  ", 2],
    ["01", 1],
    ['{"a":"\\x"}', 6],
    ["{'a': 1}", 1],
    ['{"a": -}', 7],
    ["", 0],
  ])("finds the error in %j at %i", (text, position) => {
    expect(locateJsonSyntaxError(text).position).toBe(position);
  });

  it("reports 1-based line and column", () => {
    expect(locateJsonSyntaxError('{\n  "a": @\n}')).toEqual({ position: 9, line: 2, column: 8 });
  });

  it("finds no error before the end of text that JSON.parse accepts", () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        expect(locateJsonSyntaxError(text).position).toBe(text.length);
      }),
      { seed: 7 },
    );
  });

  it("finds the error of truncated JSON where the text was cut", () => {
    fc.assert(
      fc.property(
        fc
          .json()
          .chain((text) => fc.nat({ max: Math.max(0, text.length - 1) }).map((cut) => text.slice(0, cut))),
        (text) => {
          let valid = true;
          try {
            JSON.parse(text);
          } catch {
            valid = false;
          }
          fc.pre(!valid);
          // A truncated JSON text breaks where it ends (an escape cut in half breaks at its backslash).
          expect(locateJsonSyntaxError(text).position).toBeLessThanOrEqual(text.length);
          expect(locateJsonSyntaxError(text).position).toBeGreaterThanOrEqual(
            Math.max(0, text.trimEnd().length - 1),
          );
        },
      ),
      { seed: 11 },
    );
  });

  it("stops at a depth bound instead of overflowing the stack", () => {
    const text = `${"[".repeat(50_000)}x`;
    expect(locateJsonSyntaxError(text).position).toBeLessThanOrEqual(text.length);
  });
});
