import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { agentSettingKeys } from "../../src/config/agent-settings-schema.js";
import { configurationSchema } from "../../src/config/configuration-schema.js";
import { contractDefaults } from "../../src/contract/contract-defaults.js";

const documentation = new URL("../../docs/configuration.md", import.meta.url);

/** The rows between the `<marker>:start` and `<marker>:end` comments: name and its JSON value, both in backticks. */
async function documentedDefaults(marker: string): Promise<[string, unknown][]> {
  const text = await readFile(documentation, "utf8");
  const start = text.indexOf(`<!-- ${marker}:start -->`);
  const end = text.indexOf(`<!-- ${marker}:end -->`);
  expect(start).toBeGreaterThanOrEqual(0);
  expect(end).toBeGreaterThan(start);
  const rows: [string, unknown][] = [];
  for (const line of text.slice(start, end).split("\n")) {
    const match = /^\|\s*`([^`]+)`\s*\|\s*`([^`]+)`\s*\|/.exec(line);
    if (match !== null) rows.push([match[1] as string, JSON.parse(match[2] as string)]);
  }
  return rows;
}

/** Every backticked name in the first column of the "Frontmatter keys" table. */
async function documentedFrontmatterKeys(): Promise<Set<string>> {
  const text = await readFile(documentation, "utf8");
  const start = text.indexOf("### Frontmatter keys");
  expect(start).toBeGreaterThanOrEqual(0);
  const table = text.slice(start).split("\n\n")[1] ?? "";
  const keys = new Set<string>();
  for (const line of table.split("\n")) {
    const firstCell = line.split("|")[1] ?? "";
    for (const match of firstCell.matchAll(/`([^`]+)`/g)) keys.add(match[1] as string);
  }
  return keys;
}

describe("docs/configuration.md", () => {
  it("lists exactly the built-in defaults, with the same values", async () => {
    const rows = await documentedDefaults("contract-defaults");
    const names = rows.map(([name]) => name);
    expect(new Set(names).size).toBe(names.length);
    expect(Object.fromEntries(rows)).toEqual(contractDefaults);
  });

  it("lists exactly the top-level configuration keys, with the defaults an empty configuration gets", async () => {
    const rows = await documentedDefaults("configuration-keys");
    const names = rows.map(([name]) => name);
    expect(new Set(names).size).toBe(names.length);
    expect(Object.fromEntries(rows)).toEqual(configurationSchema.parse({}));
  });

  it("documents every agent setting in the frontmatter table", async () => {
    const documented = await documentedFrontmatterKeys();
    expect(agentSettingKeys.filter((key) => !documented.has(key))).toEqual([]);
  });
});
