import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { deepMerge } from "../../src/config/deep-merge.js";

describe("deepMerge", () => {
  it("merges objects key by key; arrays, scalars and null from the higher layer replace", () => {
    const lower = {
      providers: { local: { baseUrl: "http://a", models: { m1: { contextWindow: 1 } } } },
      defaults: { tools: ["a", "b"], temperature: 0.5, maxTurns: 3 },
    };
    const higher = {
      providers: { local: { apiKey: "k", models: { m2: { contextWindow: 2 } } } },
      defaults: { tools: ["c"], temperature: null },
    };
    expect(deepMerge(lower, higher)).toEqual({
      providers: {
        local: {
          baseUrl: "http://a",
          apiKey: "k",
          models: { m1: { contextWindow: 1 }, m2: { contextWindow: 2 } },
        },
      },
      defaults: { tools: ["c"], temperature: null, maxTurns: 3 },
    });
    expect(lower.defaults.tools).toEqual(["a", "b"]);
  });

  it("lets a scalar replace an object and an object replace a scalar", () => {
    expect(deepMerge({ a: { b: 1 } }, { a: 2 })).toEqual({ a: 2 });
    expect(deepMerge({ a: 2 }, { a: { b: 1 } })).toEqual({ a: { b: 1 } });
  });

  it("the higher layer wins every leaf it sets, and the lower keeps every other", () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(fc.dictionary(fc.string(), json), fc.dictionary(fc.string(), json), (lower, higher) => {
        const merged = deepMerge(lower, higher) as Record<string, unknown>;
        for (const key of Object.keys(higher)) {
          const value = higher[key];
          const isObject = value !== null && typeof value === "object" && !Array.isArray(value);
          if (!isObject) expect(merged[key]).toEqual(value);
        }
        for (const key of Object.keys(lower)) {
          if (!Object.hasOwn(higher, key)) expect(merged[key]).toEqual(lower[key]);
        }
      }),
    );
  });
});
