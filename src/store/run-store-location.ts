import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { CharterError } from "../foundation/charter-error.js";

/** Where a run store lives: a SQLite file (or `:memory:`) or a PostgreSQL connection URL. */
export type RunStoreLocation =
  | { readonly backend: "sqlite"; readonly path: string }
  | { readonly backend: "postgres"; readonly url: string };

export interface RunStoreLocationInput {
  /** `postgres://...` / `postgresql://...`, or `sqlite:<path>` for a SQLite file. */
  readonly url?: string;
  /** A SQLite file (`:memory:` for a database that lives and dies with the store). */
  readonly path?: string;
  /** Where `CHARTER_DATABASE_URL` is read from; defaults to `process.env`. */
  readonly variables?: Readonly<Record<string, string | undefined>>;
  /** The home directory of the default SQLite file; defaults to the user's. */
  readonly homeDirectory?: string;
}

/** The environment variable naming the database when neither a URL nor a path is given. */
export const databaseUrlVariable = "CHARTER_DATABASE_URL";

/**
 * Picks the store, first match wins: an explicit `url`, an explicit `path`, `CHARTER_DATABASE_URL`, then the
 * embedded default `~/.charter/charter.db`. Throws CONFIGURATION_INVALID for a URL of another kind.
 */
export function resolveRunStoreLocation(input: RunStoreLocationInput = {}): RunStoreLocation {
  if (input.url !== undefined) return fromUrl(input.url, "url");
  if (input.path !== undefined) return { backend: "sqlite", path: sqlitePath(input.path) };
  const variable = (input.variables ?? process.env)[databaseUrlVariable];
  if (variable !== undefined && variable !== "") return fromUrl(variable, databaseUrlVariable);
  return { backend: "sqlite", path: defaultRunStorePath(input.homeDirectory) };
}

/**
 * One `--store` value as location input: a URL (`postgres://...`, `sqlite:<path>`) or a SQLite file path.
 * Undefined gives no opinion, so the lower sources (`CHARTER_DATABASE_URL`, the default file) decide.
 */
export function storeLocationFromFlag(flag: string | undefined): {
  readonly url?: string;
  readonly path?: string;
} {
  if (flag === undefined) return {};
  return flag.includes("://") || flag.startsWith("sqlite:") ? { url: flag } : { path: flag };
}

/** `~/.charter/charter.db`. */
export function defaultRunStorePath(homeDirectory: string = homedir()): string {
  return join(homeDirectory, ".charter", "charter.db");
}

/** The URL with its password replaced, fit for logs and `runs` output. */
export function describeLocation(location: RunStoreLocation): string {
  if (location.backend === "sqlite") return location.path;
  try {
    const url = new URL(location.url);
    if (url.password !== "") url.password = "***";
    return url.toString();
  } catch {
    return "postgres://(unparsable URL)";
  }
}

/** Whether a store URL names PostgreSQL (`postgres://` or `postgresql://`, any case). */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(url);
}

function fromUrl(url: string, source: string): RunStoreLocation {
  if (isPostgresUrl(url)) return { backend: "postgres", url };
  if (url.startsWith("sqlite:")) {
    const rest = url.slice("sqlite:".length);
    // sqlite:///abs/path and sqlite:/abs/path name the same file; sqlite:relative is relative to the cwd.
    return { backend: "sqlite", path: sqlitePath(rest.startsWith("//") ? rest.slice(2) : rest) };
  }
  throw new CharterError(
    "CONFIGURATION_INVALID",
    `${source} must be a postgres:// or postgresql:// URL, or sqlite:<path>`,
    { details: { source, scheme: url.split(":")[0] ?? "" } },
  );
}

function sqlitePath(path: string): string {
  if (path === ":memory:") return path;
  if (path === "") {
    throw new CharterError("CONFIGURATION_INVALID", "the run store's SQLite path is empty", {
      details: { path },
    });
  }
  return isAbsolute(path) ? path : resolve(path);
}
