import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadAbilityLibrary } from "../../src/abilities/load-ability-library.js";
import { parseAbilityFile } from "../../src/abilities/parse-ability-file.js";
import { resolveAgentAbilities } from "../../src/abilities/resolve-agent-abilities.js";
import { CharterError } from "../../src/foundation/charter-error.js";
import { blake3Hex } from "../../src/foundation/content-hash.js";

async function folder(files: Readonly<Record<string, string>>): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), "charter-ability-files-"));
  for (const [name, text] of Object.entries(files)) await writeFile(join(directory, name), text);
  return directory;
}

function caught(action: () => unknown): CharterError {
  try {
    action();
  } catch (error) {
    if (CharterError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a CharterError");
}

describe("an ability file", () => {
  it("is a frontmatter with id and keywords, and the knowledge after it", () => {
    const ability = parseAbilityFile(
      "---\nid: sql-style\nkeywords: [sql, pull request]\ndescription: House SQL style\n---\n\nCapitals for keywords.\n",
      "/abilities/sql-style.md",
    );
    expect(ability).toEqual({
      id: "sql-style",
      keywords: ["sql", "pull request"],
      description: "House SQL style",
      content: "Capitals for keywords.",
      contentHash: blake3Hex("Capitals for keywords."),
      file: "/abilities/sql-style.md",
    });
    expect(parseAbilityFile("---\nid: a1\nkeywords: sql\n---\nx", "/a.md").keywords).toEqual(["sql"]);
    expect(parseAbilityFile("---\nid: a1\n---\nx", "/a.md").keywords).toEqual([]);
  });

  it.each([
    ["no frontmatter", "Just knowledge.", "id", 1],
    ["an unclosed frontmatter", "---\nid: a\n", "id", 1],
    ["an id in another form", "---\nid: SQL_Style\n---\nx", "id", 2],
    ["no id", "---\nkeywords: [sql]\n---\nx", "id", undefined],
    ["an empty keyword", "---\nid: a\nkeywords: [sql, '']\n---\nx", "keywords[1]", 3],
    ["a keyword that is not text", "---\nid: a\nkeywords: [{ x: 1 }]\n---\nx", "keywords", 3],
    ["an unknown key", "---\nid: a\nkeyword: [sql]\n---\nx", "keyword", 3],
    ["no knowledge", "---\nid: a\n---\n\n", "body", 4],
    ["invalid YAML", "---\nid: [a\n---\nx", "frontmatter", undefined],
  ])("with %s is ABILITY_INVALID naming the file and the key", (_case, text, key, line) => {
    const error = caught(() => parseAbilityFile(text, "/abilities/a.md"));
    expect(error.code).toBe("ABILITY_INVALID");
    expect(error.details).toMatchObject({ file: "/abilities/a.md", key });
    if (line !== undefined) expect(error.details.line).toBe(line);
    expect(error.message).toContain("/abilities/a.md");
  });

  it("with a mistyped key names the key that was probably meant", () => {
    const error = caught(() => parseAbilityFile("---\nid: a\nkeywrods: [sql]\n---\nx", "/a.md"));
    expect(error.details).toMatchObject({ key: "keywrods", suggestion: "keywords" });
    expect(error.message).toContain("did you mean keywords?");
  });
});

describe("the abilities folder", () => {
  it("holds every .md file directly in it, by id", async () => {
    const directory = await folder({
      "b.md": "---\nid: beta\n---\nB.",
      "a.md": "---\nid: alpha\n---\nA.",
      "notes.txt": "not an ability",
    });
    await mkdir(join(directory, "drafts"));
    await writeFile(join(directory, "drafts", "c.md"), "not read: subfolders are not abilities");
    const library = await loadAbilityLibrary(directory);
    expect(library.exists).toBe(true);
    expect([...library.abilities.keys()]).toEqual(["alpha", "beta"]);
  });

  it("that does not exist is empty", async () => {
    const library = await loadAbilityLibrary(join(tmpdir(), "charter-no-such-abilities-folder"));
    expect(library).toMatchObject({ exists: false });
    expect(library.abilities.size).toBe(0);
  });

  it("refuses two files with one id, naming both", async () => {
    const directory = await folder({ "one.md": "---\nid: same\n---\n1", "two.md": "---\nid: same\n---\n2" });
    const error = await loadAbilityLibrary(directory).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({
      code: "ABILITY_DUPLICATE",
      details: { key: "id", id: "same", files: [join(directory, "one.md"), join(directory, "two.md")] },
    });
  });

  it("refuses an invalid file rather than loading the others", async () => {
    const directory = await folder({
      "good.md": "---\nid: good\n---\nG.",
      "bad.md": "---\nid: Bad\n---\nB.",
    });
    await expect(loadAbilityLibrary(directory)).rejects.toMatchObject({
      code: "ABILITY_INVALID",
      details: { file: join(directory, "bad.md"), key: "id" },
    });
  });
});

describe("the abilities an agent names", () => {
  const library = async () =>
    loadAbilityLibrary(
      await folder({
        "style.md": "---\nid: sql-style\n---\nS.",
        "indexes.md": "---\nid: indexes\n---\nI.",
      }),
    );
  const none = {};

  it("are resolved from the highest layer that sets each key, the budget with its source", async () => {
    const resolved = await resolveAgentAbilities({
      agentFile: "/agents/a.md",
      layers: {
        overrides: { abilityTokenBudget: 500 },
        agent: { coreAbilities: ["sql-style"] },
        defaults: { coreAbilities: ["indexes"], abilities: ["indexes", "sql-style"] },
      },
      loadLibrary: library,
    });
    expect(resolved?.core.map((ability) => ability.id)).toEqual(["sql-style"]);
    // An ability named in both lists is a core one, included once.
    expect(resolved?.candidates.map((ability) => ability.id)).toEqual(["indexes"]);
    expect(resolved).toMatchObject({ tokenBudget: 500, tokenBudgetSource: "cli" });
  });

  it("are none, and the folder is never read, when the agent names none", async () => {
    let read = false;
    const resolved = await resolveAgentAbilities({
      agentFile: "/agents/a.md",
      layers: { overrides: none, agent: { abilityTokenBudget: 10 }, defaults: none },
      loadLibrary: async () => {
        read = true;
        return library();
      },
    });
    expect(resolved).toBeNull();
    expect(read).toBe(false);
  });

  it("must exist: an unknown id is ABILITY_UNKNOWN naming the agent file, the key and the nearest id", async () => {
    const error = await resolveAgentAbilities({
      agentFile: "/agents/a.md",
      layers: { overrides: none, agent: { abilities: ["indexes", "sql-styel"] }, defaults: none },
      loadLibrary: library,
    }).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({
      code: "ABILITY_UNKNOWN",
      details: {
        file: "/agents/a.md",
        key: "abilities",
        id: "sql-styel",
        source: "agent",
        suggestion: "sql-style",
      },
    });
    expect((error as Error).message).toContain("did you mean sql-style?");
  });
});
