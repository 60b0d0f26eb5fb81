import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { CharterError } from "../../foundation/charter-error.js";
import { resolveRunStoreLocation } from "../../store/run-store-location.js";

/** The environment variable holding the key tenants' provider keys are sealed with (32 bytes, base64). */
export const secretsKeyVariable = "CHARTER_SECRETS_KEY";
const keyLength = 32;

/**
 * The key a server seals its tenants' provider keys with before they are stored: `CHARTER_SECRETS_KEY` (32 random
 * bytes in base64, the same for every process on one store: `openssl rand -base64 32`); else, for a SQLite store,
 * a key file made beside the database on first use (`<database>.secrets-key`, readable by its owner only), so that
 * a copy or an export of the database alone does not carry usable keys; else (PostgreSQL without the variable)
 * null: the server then refuses to store a tenant's provider key, naming the variable.
 */
export async function loadTenantSecretsKey(options: {
  readonly storeUrl: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
}): Promise<Uint8Array | null> {
  const variable = (options.processEnvironment ?? process.env)[secretsKeyVariable];
  if (variable !== undefined && variable !== "") return decodeKey(variable, secretsKeyVariable);
  const location = resolveRunStoreLocation({ url: options.storeUrl, variables: {} });
  if (location.backend !== "sqlite") return null;
  // A database that lives and dies with its process: so does its key.
  if (location.path === ":memory:") return randomBytes(keyLength);
  const path = `${location.path}.secrets-key`;
  await mkdir(dirname(path), { recursive: true });
  try {
    // `wx`: two processes opening one new store at once make one key; the second reads the first's.
    await writeFile(path, randomBytes(keyLength).toString("base64"), { flag: "wx", mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return decodeKey(await readFile(path, "utf8"), path);
}

function decodeKey(text: string, source: string): Uint8Array {
  const key = Buffer.from(text.trim(), "base64");
  if (key.length !== keyLength) {
    throw new CharterError(
      "CONFIGURATION_INVALID",
      `${source} must hold ${keyLength} bytes in base64 (it holds ${key.length}): make one with \`openssl rand -base64 32\``,
      { details: { source, bytes: key.length, expected: keyLength } },
    );
  }
  return key;
}
