import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { contractDefaults } from "../../src/contract/contract-defaults.js";

const documentation = new URL("../../docs/configuration.md", import.meta.url);

/** The rows between the contract-defaults markers: setting name and its JSON value, both in backticks. */
async function documentedDefaults(): Promise<[string, unknown][]> {
  const text = await readFile(documentation, "utf8");
  const start = text.indexOf("<!-- contract-defaults:start -->");
  const end = text.indexOf("<!-- contract-defaults:end -->");
  expect(start).toBeGreaterThanOrEqual(0);
  expect(end).toBeGreaterThan(start);
  const rows: [string, unknown][] = [];
  for (const line of text.slice(start, end).split("\n")) {
    const match = /^\|\s*`([^`]+)`\s*\|\s*`([^`]+)`\s*\|/.exec(line);
    if (match !== null) rows.push([match[1] as string, JSON.parse(match[2] as string)]);
  }
  return rows;
}

describe("docs/configuration.md", () => {
  it("lists exactly the built-in defaults, with the same values", async () => {
    const rows = await documentedDefaults();
    const names = rows.map(([name]) => name);
    expect(new Set(names).size).toBe(names.length);
    expect(Object.fromEntries(rows)).toEqual(contractDefaults);
  });
});
