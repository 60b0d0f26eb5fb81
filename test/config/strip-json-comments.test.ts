import { describe, expect, it } from "vitest";
import { stripJsonComments } from "../../src/config/strip-json-comments.js";

describe("stripJsonComments", () => {
  it("removes line and block comments, keeping strings that contain // or /* and every line break", () => {
    const text = '// head\n{ "url": "http://x/*y*/", /* a\nb */ "n": 1 // tail\n}';
    const stripped = stripJsonComments(text);
    expect(JSON.parse(stripped)).toEqual({ url: "http://x/*y*/", n: 1 });
    expect(stripped.split("\n")).toHaveLength(text.split("\n").length);
    expect(stripped).toHaveLength(text.length);
  });

  it("keeps an escaped quote inside a string", () => {
    expect(JSON.parse(stripJsonComments('{"a": "say \\"//hi\\""} // c'))).toEqual({ a: 'say "//hi"' });
  });
});
