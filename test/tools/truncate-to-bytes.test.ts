import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { truncateToBytes } from "../../src/tools/truncate-to-bytes.js";

describe("truncateToBytes", () => {
  it("keeps text within the limit unchanged", () => {
    expect(truncateToBytes("héllo", 6, "[cut]")).toBe("héllo");
  });

  it("never splits a character and never exceeds the limit", () => {
    expect(truncateToBytes("ééééé", 8, "…")).toBe("éé…");
    expect(truncateToBytes("a😀b", 4, "")).toBe("a");
    expect(truncateToBytes("anything long", 2, "[cut]")).toBe("[c");
  });

  it("for any text, limit and marker: within the limit, a prefix of the text, no broken character", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 200 }),
        fc.integer({ min: 0, max: 300 }),
        fc.constantFrom("", "…", "[truncated]"),
        (text, maxBytes, marker) => {
          const cut = truncateToBytes(text, maxBytes, marker);
          if (Buffer.byteLength(text) <= maxBytes) {
            expect(cut).toBe(text);
            return;
          }
          expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(maxBytes);
          const kept = cut.endsWith(marker) ? cut.slice(0, cut.length - marker.length) : cut;
          if (Buffer.byteLength(marker) < maxBytes) expect(text.startsWith(kept)).toBe(true);
        },
      ),
      { numRuns: 500, seed: 7 },
    );
  });
});
