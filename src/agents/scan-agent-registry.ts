import { readdir } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { type AgentDefinition, loadAgentFile } from "../config/agent-file.js";
import { isAgentIdReference } from "../config/agent-reference.js";
import type { Configuration } from "../config/configuration-schema.js";
import { loadConfiguration } from "../config/load-configuration.js";
import { type AgentDirectory, agentDirectories } from "./agent-directories.js";
import { type AgentProblem, problemsFromError } from "./agent-problem.js";
import { AgentRegistry, compareIds } from "./agent-registry.js";

/** Where the registry's agent files are: folders given outright, or those a configuration names. */
export interface LoadAgentRegistryOptions {
  /** The folders to read (each must exist); default the configuration's `agentsDir`, else `./agents` if it exists. */
  readonly directories?: readonly string[];
  /** A configuration already loaded, whose `agentsDir` names the folders. */
  readonly configuration?: Configuration;
  /** The working directory: `./agents` and relative `directories` are found from it. Default `process.cwd()`. */
  readonly cwd?: string;
  /** Without `directories` or `configuration`, the configuration layers are loaded as `charter` does (`--config`). */
  readonly configPath?: string;
  readonly homeDirectory?: string;
  readonly etcDirectory?: string;
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
}

export interface AgentRegistryScan {
  /** Every agent that validated (the built-in `standard` included); a file with a problem is never in it. */
  readonly registry: AgentRegistry;
  /** Every problem in every file, in folder order then file name order. */
  readonly problems: readonly AgentProblem[];
  /** The agent files read, in the order read. */
  readonly files: readonly string[];
}

/**
 * Reads every agent file of the registry's folders and registers each one that validates. Agent files are the
 * `*.md` files directly in each folder (not in subfolders), except `README.md` and hidden files, read in order of
 * name. With `checkReferences`, each agent's `agents` entries are checked too (an id the registry lacks, a path
 * that does not load): what `charter agents validate` reports beyond the profiles themselves.
 */
export async function scanAgentRegistry(
  options: LoadAgentRegistryOptions & { readonly checkReferences?: boolean } = {},
): Promise<AgentRegistryScan> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const directories = await registryDirectories(options, cwd);
  const registry = new AgentRegistry(cwd);
  const problems: AgentProblem[] = [];
  const files: string[] = [];
  const loaded: AgentDefinition[] = [];
  for (const directory of directories) {
    const names = await agentFileNames(directory, problems);
    for (const name of names) {
      const file = join(directory.path, name);
      files.push(file);
      try {
        const agent = await loadAgentFile(file);
        registry.register(agent);
        loaded.push(agent);
      } catch (error) {
        problems.push(...problemsFromError(error, file));
      }
    }
  }
  if (options.checkReferences === true) {
    for (const agent of loaded) problems.push(...(await referenceProblems(agent, registry)));
  }
  return { registry, problems, files };
}

async function registryDirectories(
  options: LoadAgentRegistryOptions,
  cwd: string,
): Promise<readonly AgentDirectory[]> {
  if (options.directories !== undefined) {
    return options.directories.map((path) => ({ path: resolve(cwd, path), explicit: true }));
  }
  if (options.configuration !== undefined) return agentDirectories(options.configuration, cwd);
  const loaded = await loadConfiguration({
    cwd,
    ...(options.configPath !== undefined ? { configPath: resolve(cwd, options.configPath) } : {}),
    homeDirectory: options.homeDirectory ?? homedir(),
    ...(options.etcDirectory !== undefined ? { etcDirectory: options.etcDirectory } : {}),
    ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
    ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
  });
  return agentDirectories(loaded.configuration, cwd);
}

async function agentFileNames(directory: AgentDirectory, problems: AgentProblem[]): Promise<string[]> {
  try {
    const entries = await readdir(directory.path, { withFileTypes: true });
    return entries
      .filter(
        (entry) =>
          (entry.isFile() || entry.isSymbolicLink()) &&
          entry.name.toLowerCase().endsWith(".md") &&
          !entry.name.startsWith(".") &&
          entry.name.toLowerCase() !== "readme.md",
      )
      .map((entry) => entry.name)
      .sort(compareIds);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? "unreadable";
    if (reason === "ENOENT" && !directory.explicit) return [];
    problems.push({
      file: directory.path,
      key: "agentsDir",
      line: null,
      code: "CONFIGURATION_INVALID",
      message:
        reason === "ENOENT"
          ? `the agents folder ${directory.path} (agentsDir) does not exist`
          : `the agents folder ${directory.path} (agentsDir) cannot be read (${reason})`,
    });
    return [];
  }
}

/** What is wrong with an agent's `agents` entries: ids the registry lacks or has disabled, files that do not load. */
async function referenceProblems(agent: AgentDefinition, registry: AgentRegistry): Promise<AgentProblem[]> {
  const problems: AgentProblem[] = [];
  for (const [index, reference] of (agent.settings.agents ?? []).entries()) {
    const key = `agents[${index}]`;
    try {
      if (isAgentIdReference(reference)) registry.require(reference);
      else await loadAgentFile(resolve(agent.directory, reference));
    } catch (error) {
      for (const problem of problemsFromError(error, agent.path)) {
        problems.push({
          ...problem,
          file: agent.path,
          key,
          message: `sub-agent '${reference}': ${problem.message}`,
        });
      }
    }
  }
  return problems;
}
