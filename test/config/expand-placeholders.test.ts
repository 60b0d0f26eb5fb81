// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are configuration placeholders, not templates.
import { describe, expect, it } from "vitest";
import { expandPlaceholders } from "../../src/config/expand-placeholders.js";
import { CharterError } from "../../src/foundation/charter-error.js";

const file = "/project/.charter.json";

describe("expandPlaceholders", () => {
  const sources = {
    file,
    fileVariables: new Map([
      ["TOKEN", "from-file"],
      ["EMPTY", ""],
    ]),
    processEnvironment: { TOKEN: "from-process", HOST: "127.0.0.1", PORT: "8080" },
  };

  it("expands string values anywhere in the tree, the env file before the process environment", () => {
    const input = {
      url: "http://${HOST}:${PORT}/v1",
      nested: { list: ["${TOKEN}", 3, true, null, "plain"], empty: "[${EMPTY}]" },
    };
    expect(expandPlaceholders(input, sources)).toEqual({
      url: "http://127.0.0.1:8080/v1",
      nested: { list: ["from-file", 3, true, null, "plain"], empty: "[]" },
    });
    // The input is not modified.
    expect(input.url).toBe("http://${HOST}:${PORT}/v1");
  });

  it("never expands keys", () => {
    expect(expandPlaceholders({ "${TOKEN}": "${TOKEN}" }, sources)).toEqual({ "${TOKEN}": "from-file" });
  });

  it("keeps ${parameters.x} and other non-variable text literally", () => {
    const input = { path: "/items/${parameters.id}?q=${parameters.query}", other: "${not a var} $TOKEN ${}" };
    expect(expandPlaceholders(input, sources)).toEqual(input);
  });

  it("names the unresolved variable and the file", () => {
    let caught: unknown;
    try {
      expandPlaceholders({ a: { b: "${TOKEN}-${MISSING_VARIABLE}" } }, sources);
    } catch (error) {
      caught = error;
    }
    expect(CharterError.isInstance(caught) && caught.code).toBe("ENVIRONMENT_VARIABLE_UNRESOLVED");
    expect((caught as CharterError).details).toEqual({ variable: "MISSING_VARIABLE", file });
  });

  it("keeps a key named __proto__ as data", () => {
    const parsed: unknown = JSON.parse('{"__proto__": {"polluted": "${HOST}"}}');
    const expanded = expandPlaceholders(parsed, sources) as Record<string, unknown>;
    expect(Object.getPrototypeOf(expanded)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(expanded, "__proto__")?.value).toEqual({ polluted: "127.0.0.1" });
  });
});
