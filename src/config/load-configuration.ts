import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { CharterError } from "../foundation/charter-error.js";
import { deepFreeze } from "../foundation/deep-freeze.js";
import { type Configuration, configurationLayerSchema, configurationSchema } from "./configuration-schema.js";
import { deepMerge } from "./deep-merge.js";
import { loadEnvFile } from "./env-file.js";
import { expandPlaceholders } from "./expand-placeholders.js";
import { describeSchemaIssues, type SchemaIssue, schemaIssues } from "./schema-issues.js";
import { stripJsonComments } from "./strip-json-comments.js";

export interface LoadConfigurationOptions {
  /** `--config FILE`: the highest layer, and the only one that must exist. */
  readonly configPath?: string;
  /** Defaults to `process.cwd()`. */
  readonly cwd?: string;
  /** The directory of the prompt or agent file. */
  readonly promptDirectory?: string;
  /** The directory of the charter executable. */
  readonly binaryDirectory?: string;
  /** Defaults to `os.homedir()`; the layer is `<home>/.charter/charter.json`. */
  readonly homeDirectory?: string;
  /** Defaults to `/etc`; the layer is `<etc>/charter/charter.json`. */
  readonly etcDirectory?: string;
  /** Defaults to `process.env`. */
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  /**
   * A layer given as data rather than read from a file, above every file (a server's per-tenant settings: provider
   * and model overrides, provider keys). Checked like a file; `label` names it wherever a file's path would be
   * named (errors, `layers`). Its `${VAR}` placeholders are not expanded: it is data, not a file someone wrote.
   */
  readonly overlay?: ConfigurationOverlay;
}

export interface ConfigurationOverlay {
  readonly label: string;
  readonly data: Readonly<Record<string, unknown>>;
}

export type ConfigurationLayerOrigin =
  | "overlay"
  | "explicit"
  | "cwd"
  | "prompt"
  | "binary"
  | "home"
  | "system";

export interface ConfigurationLayer {
  readonly path: string;
  readonly present: boolean;
  readonly origin: ConfigurationLayerOrigin;
  /** The `.charter.env` that was read beside this layer, or null. */
  readonly envFile: string | null;
}

/** A value that must never appear in a transcript or log; `label` says where it came from (never the value). */
export interface ConfigurationSecret {
  readonly value: string;
  readonly label: string;
}

export interface LoadedConfiguration {
  readonly configuration: Configuration;
  /** Highest precedence first; each path appears once, at its highest position. */
  readonly layers: readonly ConfigurationLayer[];
  readonly secrets: readonly ConfigurationSecret[];
}

const configurationFileName = ".charter.json";
const envFileName = ".charter.env";

interface LoadedLayer {
  readonly path: string;
  readonly data: Record<string, unknown>;
}

/**
 * Loads and merges the six configuration layers of seed 000 §9. Each file's `${VAR}` placeholders are
 * expanded with its own `.charter.env` (then the process environment) before merging, and each file is
 * checked on its own so that errors name the file that holds the problem.
 */
export async function loadConfiguration(
  options: LoadConfigurationOptions = {},
): Promise<LoadedConfiguration> {
  const processEnvironment = options.processEnvironment ?? process.env;
  const candidates = layerCandidates(options);
  const layers: ConfigurationLayer[] = [];
  const loaded: LoadedLayer[] = [];
  const secrets = new SecretCollector();

  if (options.overlay !== undefined) {
    // A structured copy: later steps make paths absolute in place, and the caller's object stays as given.
    const data = structuredClone(options.overlay.data) as Record<string, unknown>;
    const checked = configurationLayerSchema.safeParse(data);
    if (!checked.success)
      throw configurationInvalid(
        options.overlay.label,
        schemaIssues(checked.error, [], configurationLayerSchema),
      );
    layers.push({ path: options.overlay.label, present: true, origin: "overlay", envFile: null });
    loaded.push({ path: options.overlay.label, data });
  }
  for (const candidate of candidates) {
    const text = await readLayer(candidate.path, candidate.origin === "explicit");
    if (text === null) {
      layers.push({ ...candidate, present: false, envFile: null });
      continue;
    }
    const envPath = join(dirname(candidate.path), envFileName);
    const fileVariables = (await loadEnvFile(envPath)) ?? new Map<string, string>();
    for (const [name, value] of fileVariables) secrets.add(value, `${envPath}:${name}`);
    const expanded = expandPlaceholders(parseJson(text, candidate.path), {
      file: candidate.path,
      fileVariables,
      processEnvironment,
      onResolved: (variable, value, from) =>
        secrets.add(value, from === "env-file" ? `${envPath}:${variable}` : `environment:${variable}`),
    }) as Record<string, unknown>;
    const checked = configurationLayerSchema.safeParse(expanded);
    if (!checked.success)
      throw configurationInvalid(candidate.path, schemaIssues(checked.error, [], configurationLayerSchema));
    resolveServerDirectories(expanded, dirname(candidate.path));
    resolveAbilitiesDirectory(expanded, dirname(candidate.path));
    resolveAgentDirectories(expanded, dirname(candidate.path));
    layers.push({ ...candidate, present: true, envFile: fileVariables.size > 0 ? envPath : null });
    loaded.push({ path: candidate.path, data: expanded });
  }

  let merged: unknown = {};
  for (let index = loaded.length - 1; index >= 0; index--) merged = deepMerge(merged, loaded[index]?.data);
  const complete = configurationSchema.safeParse(merged);
  if (!complete.success) {
    const issues = schemaIssues(complete.error, [], configurationSchema);
    const files = layersDefining(loaded, (issues[0] as SchemaIssue).path);
    throw configurationInvalid(files[0] ?? "(merged configuration)", issues, files);
  }
  const configuration = complete.data;
  for (const [name, provider] of Object.entries(configuration.providers)) {
    if (provider.apiKey !== null) secrets.add(provider.apiKey, `providers.${name}.apiKey`);
    for (const [header, value] of Object.entries(provider.headers)) {
      secrets.add(value, `providers.${name}.headers.${header}`);
    }
  }
  // Headers of remote MCP servers and REST tools carry credentials too (not REST headers with
  // `${parameters.x}` placeholders: those are filled per call, not secrets).
  for (const [name, server] of Object.entries(configuration.mcpServers)) {
    const headers = (server as { headers?: Readonly<Record<string, string>> }).headers ?? {};
    for (const [header, value] of Object.entries(headers))
      secrets.add(value, `mcpServers.${name}.headers.${header}`);
  }
  for (const [name, tool] of Object.entries(configuration.restTools)) {
    for (const [header, value] of Object.entries(tool.headers ?? {})) {
      if (!value.includes("${parameters.")) secrets.add(value, `restTools.${name}.headers.${header}`);
    }
  }
  return deepFreeze({ configuration, layers, secrets: secrets.list });
}

/**
 * Every file `loadConfiguration(options)` may read, whether it exists or not: each layer's file and the
 * `.charter.env` beside it (what a cache of its result must watch).
 */
export function configurationFilesRead(options: LoadConfigurationOptions): string[] {
  const paths = layerCandidates(options).flatMap((candidate) => [
    candidate.path,
    join(dirname(candidate.path), envFileName),
  ]);
  return [...new Set(paths)];
}

function layerCandidates(
  options: LoadConfigurationOptions,
): { path: string; origin: ConfigurationLayerOrigin }[] {
  const cwd = resolve(options.cwd ?? process.cwd());
  const candidates: { path: string | undefined; origin: ConfigurationLayerOrigin }[] = [
    {
      path: options.configPath === undefined ? undefined : resolve(cwd, options.configPath),
      origin: "explicit",
    },
    { path: join(cwd, configurationFileName), origin: "cwd" },
    {
      path:
        options.promptDirectory === undefined
          ? undefined
          : join(resolve(cwd, options.promptDirectory), configurationFileName),
      origin: "prompt",
    },
    {
      path:
        options.binaryDirectory === undefined
          ? undefined
          : join(resolve(cwd, options.binaryDirectory), configurationFileName),
      origin: "binary",
    },
    { path: join(resolve(options.homeDirectory ?? homedir()), ".charter", "charter.json"), origin: "home" },
    { path: join(resolve(options.etcDirectory ?? "/etc"), "charter", "charter.json"), origin: "system" },
  ];
  const seen = new Set<string>();
  const unique: { path: string; origin: ConfigurationLayerOrigin }[] = [];
  for (const candidate of candidates) {
    if (candidate.path === undefined || seen.has(candidate.path)) continue;
    seen.add(candidate.path);
    unique.push({ path: candidate.path, origin: candidate.origin });
  }
  return unique;
}

async function readLayer(path: string, required: boolean): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? "unreadable";
    if (reason === "ENOENT" && !required) return null;
    throw new CharterError("CONFIGURATION_INVALID", `Cannot read configuration file ${path} (${reason})`, {
      details: { file: path, reason },
      cause: error,
    });
  }
}

function parseJson(text: string, file: string): Record<string, unknown> {
  let data: unknown;
  try {
    // Comments are allowed (JSONC): `charter init` writes a commented file.
    data = JSON.parse(stripJsonComments(text));
  } catch (error) {
    throw new CharterError(
      "CONFIGURATION_INVALID",
      `${file} is not valid JSON: ${(error as Error).message}`,
      {
        details: { file },
        cause: error,
      },
    );
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new CharterError("CONFIGURATION_INVALID", `${file} must contain a JSON object`, {
      details: { file },
    });
  }
  return data as Record<string, unknown>;
}

/** A relative MCP server `cwd` is relative to the file that declares it, not to wherever charter runs. */
function resolveServerDirectories(data: Record<string, unknown>, directory: string): void {
  const servers = data.mcpServers as Record<string, { cwd?: string }> | undefined;
  for (const server of Object.values(servers ?? {})) {
    if (server.cwd !== undefined && !isAbsolute(server.cwd)) server.cwd = resolve(directory, server.cwd);
  }
}

/** A relative `abilitiesDir` is relative to the file that sets it, as a server's `cwd` is. */
function resolveAbilitiesDirectory(data: Record<string, unknown>, directory: string): void {
  if (typeof data.abilitiesDir === "string" && !isAbsolute(data.abilitiesDir))
    data.abilitiesDir = resolve(directory, data.abilitiesDir);
}

/** `agentsDir` is relative to the configuration file that sets it: made absolute here, before layers merge. */
function resolveAgentDirectories(data: Record<string, unknown>, directory: string): void {
  const value = data.agentsDir;
  if (value === undefined || value === null) return;
  const list = typeof value === "string" ? [value] : (value as string[]);
  data.agentsDir = list.map((path) => resolve(directory, path));
}

/** The files (highest precedence first) that define the object a merged-configuration issue is about. */
function layersDefining(loaded: readonly LoadedLayer[], path: readonly (string | number)[]): string[] {
  const parentPath = path.slice(0, -1);
  return loaded
    .filter((layer) => {
      let node: unknown = layer.data;
      for (const segment of parentPath) {
        if (node === null || typeof node !== "object" || !Object.hasOwn(node, segment)) return false;
        node = (node as Record<string | number, unknown>)[segment];
      }
      return true;
    })
    .map((layer) => layer.path);
}

function configurationInvalid(
  file: string,
  issues: readonly SchemaIssue[],
  files: readonly string[] = [file],
): CharterError {
  const first = issues[0] as SchemaIssue;
  return new CharterError("CONFIGURATION_INVALID", `Configuration ${file}: ${describeSchemaIssues(issues)}`, {
    details: {
      file,
      files,
      key: first.key,
      ...(first.suggestion === undefined ? {} : { suggestion: first.suggestion }),
      issues,
    },
  });
}

class SecretCollector {
  readonly list: ConfigurationSecret[] = [];
  private readonly seen = new Set<string>();

  add(value: string, label: string): void {
    if (value === "" || this.seen.has(value)) return;
    this.seen.add(value);
    this.list.push({ value, label });
  }
}
