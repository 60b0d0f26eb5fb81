import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { sqliteStoreDefaults } from "../../src/store/open-sqlite-database.js";

const storeDocs = resolve(import.meta.dirname, "../../docs/store.md");

describe("docs/store.md's SQLite options", () => {
  it("lists every option with the default the code uses", async () => {
    const text = await readFile(storeDocs, "utf8");
    // Rows of the options table: | `sqlite.<name>` | `<default>` | meaning |
    const documented = Object.fromEntries(
      [...text.matchAll(/^\| `sqlite\.(\w+)` \| `([^`]+)` \|/gm)].map(([, name, value]) => [
        name,
        /^\d+$/.test(value ?? "") ? Number(value) : JSON.parse(value ?? "null"),
      ]),
    );
    expect(documented).toEqual(sqliteStoreDefaults);
  });
});
