import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { CharterError } from "../foundation/charter-error.js";
import type { Ability, AbilityLibrary } from "./ability.js";
import { parseAbilityFile } from "./parse-ability-file.js";

/**
 * Loads every ability of a folder: each `*.md` file directly in it (not in subfolders), in name order. A folder
 * that does not exist is an empty library; an invalid file is `ABILITY_INVALID` and two files with one id are
 * `ABILITY_DUPLICATE`, each naming the files, so nothing half-loaded is ever used.
 */
export async function loadAbilityLibrary(directory: string): Promise<AbilityLibrary> {
  const folder = resolve(directory);
  let names: string[];
  try {
    names = (await readdir(folder, { withFileTypes: true }))
      .filter((entry) => entry.isFile() && entry.name.toLowerCase().endsWith(".md"))
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? "unreadable";
    if (reason === "ENOENT") return { directory: folder, exists: false, abilities: new Map() };
    throw new CharterError("ABILITY_INVALID", `Cannot read the abilities folder ${folder} (${reason})`, {
      details: { file: folder, key: "abilitiesDir", reason },
      cause: error,
    });
  }
  const abilities = new Map<string, Ability>();
  for (const name of names) {
    const file = join(folder, name);
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? "unreadable";
      throw new CharterError("ABILITY_INVALID", `Cannot read ability file ${file} (${reason})`, {
        details: { file, key: "file", reason },
        cause: error,
      });
    }
    const ability = parseAbilityFile(text, file);
    const existing = abilities.get(ability.id);
    if (existing !== undefined) {
      throw new CharterError(
        "ABILITY_DUPLICATE",
        `Ability id "${ability.id}" is defined twice: in ${existing.file} and in ${file}; give one of them another id`,
        { details: { key: "id", id: ability.id, file, files: [existing.file, file] } },
      );
    }
    abilities.set(ability.id, ability);
  }
  return { directory: folder, exists: true, abilities };
}
