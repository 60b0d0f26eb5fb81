import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/foundation/canonical-json.js";
import { blake3Hex, contentHash } from "../../src/foundation/content-hash.js";

describe("canonicalJson (RFC 8785)", () => {
  it("sorts keys by UTF-16 code units and serialises numbers as ECMAScript does", () => {
    // The RFC 8785 §3.2.3 sorting example and its number formatting examples.
    const value = {
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis",
    };
    // Read the keys from the text: Object.keys would list integer-like keys first.
    const keys = [...canonicalJson(value).matchAll(/"((?:[^"\\]|\\.)*)":/g)].map((match) =>
      JSON.parse(`"${match[1]}"`),
    );
    expect(keys).toEqual(["\r", "1", "\u0080", "\u00f6", "\u20ac", "\ud83d\ude00", "\ufb33"]);
    expect(canonicalJson({ numbers: [333333333.3333333, 1e30, 4.5, 0.002, 1e-27, -0] })).toBe(
      '{"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27,0]}',
    );
    expect(canonicalJson({ b: [true, null, "x\u2028"], a: { d: 1, c: undefined } })).toBe(
      '{"a":{"d":1},"b":[true,null,"x\u2028"]}',
    );
  });

  it("rejects values JSON cannot represent", () => {
    expect(() => canonicalJson({ x: Number.NaN })).toThrow(TypeError);
    expect(() => canonicalJson({ x: 1n })).toThrow(TypeError);
  });

  it("is independent of key insertion order and round-trips through JSON.parse", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
        if (value !== null && typeof value === "object" && !Array.isArray(value)) {
          const reversed = Object.fromEntries(Object.entries(value).reverse());
          expect(canonicalJson(reversed)).toBe(text);
        }
      }),
    );
  });
});

/** A reference serializer written independently: keys sorted at every level, JSON.stringify for leaves. */
function referenceCanonical(value: unknown): string {
  // Integer-like keys are listed first by JSON.stringify whatever the insertion order, so build the text by hand.
  const write = (item: unknown): string => {
    if (item === null || typeof item !== "object") return JSON.stringify(item);
    if (Array.isArray(item)) return `[${item.map(write).join(",")}]`;
    return `{${Object.keys(item)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${write((item as Record<string, unknown>)[key])}`)
      .join(",")}}`;
  };
  return write(value);
}

describe("canonicalJson fast path", () => {
  it("gives the same text whether or not the keys were inserted in sorted order (integer-like keys included)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(referenceCanonical(value));
      }),
      { numRuns: 500 },
    );
    expect(canonicalJson({ "9": 1, "10": 2, a: { b: 1, a: 2 } })).toBe('{"10":2,"9":1,"a":{"a":2,"b":1}}');
    expect(canonicalJson({ a: 1, b: [{ c: 1, d: 2 }] })).toBe('{"a":1,"b":[{"c":1,"d":2}]}');
  });
});

describe("BLAKE3 content hash", () => {
  it("matches the BLAKE3 reference vector for empty input", () => {
    expect(blake3Hex("")).toBe("af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262");
  });

  it("gives a text the hash of its UTF-8 bytes, also when asked again (short texts' hashes are remembered)", () => {
    const bytes = new TextEncoder();
    fc.assert(
      fc.property(fc.string({ maxLength: 100, unit: "grapheme" }), (text) => {
        const expected = blake3Hex(bytes.encode(text));
        expect(blake3Hex(text)).toBe(expected);
        expect(blake3Hex(text)).toBe(expected);
      }),
      { numRuns: 3000 },
    );
    expect(blake3Hex('{"results":1}')).toBe(blake3Hex(bytes.encode('{"results":1}')));
    // Around the length up to which texts are encoded into a reused buffer (21,845 code units).
    for (const length of [21_844, 21_845, 21_846, 70_000]) {
      const text = "é".repeat(length);
      expect(blake3Hex(text)).toBe(blake3Hex(bytes.encode(text)));
    }
  });

  it("hashes equal values equally and different values differently", () => {
    expect(contentHash({ a: 1, b: [2] })).toBe(contentHash({ b: [2], a: 1 }));
    expect(contentHash({ a: 1 })).not.toBe(contentHash({ a: 2 }));
  });
});
