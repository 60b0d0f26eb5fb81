import { relative } from "node:path";
import type { AgentProblem } from "../agents/agent-problem.js";
import type { AgentSummary } from "../agents/agent-summary.js";
import type { LoadAgentRegistryOptions } from "../agents/load-agent-registry.js";
import { CharterError } from "../foundation/charter-error.js";
import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodes } from "./exit-code.js";
import { sharedFlags } from "./shared-flags.js";

const flags = {
  config: sharedFlags.config,
  json: sharedFlags.json,
  limit: {
    type: "string",
    valueName: "N",
    defaultText: "every candidate",
    description: "agents select: at most this many candidates, best first.",
  },
} as const;

const subcommands = ["list", "show", "select", "validate"] as const;

/** `charter agents list|show|validate`: the registry of agents in the configured folders. */
export const agentsCommand = defineCommand({
  name: "agents",
  summary: "List, show or validate the agents of the registry (agentsDir, else ./agents)",
  description:
    "The registry is every agent file in the configured agentsDir folders (else ./agents when it exists), plus the built-in standard agent. agents list prints one line per agent (id, enabled, description, file); agents show <id> prints one agent's profile, settings and system prompt; agents validate checks every file and lists every problem (file, line, key, what is wrong), exit 4 when there is any.",
  positionals: [
    {
      name: "list|show|validate",
      description: "list: every agent; show: one agent; validate: every problem.",
    },
    { name: "agent-id", optional: true, description: "agents show: the agent to show." },
  ],
  flags,
  examples: ["charter agents list", "charter agents show reviewer --json", "charter agents validate"],
  run: agentsSubcommand,
});

async function agentsSubcommand(
  positionals: readonly string[],
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const [subcommand, argument, ...extra] = positionals;
  if (subcommand === undefined || !(subcommands as readonly string[]).includes(subcommand)) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      `charter agents needs a subcommand: ${subcommands.join(", ")}${subcommand === undefined ? "" : ` (not '${subcommand}')`}`,
      { details: { argument: "subcommand", ...(subcommand === undefined ? {} : { value: subcommand }) } },
    );
  }
  const expectsArgument = subcommand === "show" || subcommand === "select";
  if (
    (expectsArgument && argument === undefined) ||
    (!expectsArgument && argument !== undefined) ||
    extra.length > 0
  ) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      subcommand === "show"
        ? "usage: charter agents show <agent-id>"
        : subcommand === "select"
          ? 'usage: charter agents select "<task>" (quote the task)'
          : `usage: charter agents ${subcommand}`,
      {
        details: {
          argument: expectsArgument && argument === undefined ? subcommand : (extra[0] ?? argument),
          reason: expectsArgument && argument === undefined ? "missing" : "unexpected",
        },
      },
    );
  }
  if (values.limit !== undefined && subcommand !== "select") {
    throw new CharterError("ARGUMENT_INVALID", "--limit is for charter agents select only", {
      details: { argument: "limit", reason: "unexpected" },
    });
  }
  const options: LoadAgentRegistryOptions = {
    ...(values.config !== undefined ? { configPath: values.config } : {}),
    ...(streams.binaryDirectory !== undefined ? { binaryDirectory: streams.binaryDirectory } : {}),
  };
  if (subcommand === "validate") return validateAgents(options, values.json === true, streams);

  const { loadAgentRegistry } = await import("../agents/load-agent-registry.js");
  const { agentDetails, agentSummary } = await import("../agents/agent-summary.js");
  const registry = await loadAgentRegistry(options);
  if (subcommand === "list") {
    const agents = registry.list().map(agentSummary);
    if (values.json) streams.stdout.write(`${JSON.stringify(agents)}\n`);
    else for (const agent of agents) streams.stdout.write(listLine(agent, agents));
    return exitCodes.success;
  }
  if (subcommand === "select") {
    const { selectAgents } = await import("../agents/select-agents.js");
    const limit = values.limit === undefined ? undefined : Number(values.limit);
    if (limit !== undefined && (!Number.isInteger(limit) || limit <= 0)) {
      throw new CharterError(
        "ARGUMENT_INVALID",
        `--limit must be a positive integer, not '${values.limit}'`,
        {
          details: { argument: "limit" },
        },
      );
    }
    const candidates = selectAgents(registry, argument as string, limit === undefined ? {} : { limit });
    if (values.json) streams.stdout.write(`${JSON.stringify(candidates)}\n`);
    else {
      const width = Math.max(...candidates.map((candidate) => candidate.agentId.length));
      for (const candidate of candidates) {
        streams.stdout.write(`${candidate.agentId.padEnd(width)}  ${candidate.confidence.toFixed(3)}\n`);
        for (const reason of candidate.reasons) streams.stdout.write(`${" ".repeat(width + 2)}${reason}\n`);
      }
    }
    return exitCodes.success;
  }
  const agent = registry.get(argument as string);
  if (agent === undefined) registry.require(argument as string);
  const details = agentDetails(agent!);
  if (values.json) {
    streams.stdout.write(`${JSON.stringify(details)}\n`);
    return exitCodes.success;
  }
  const lines = [
    `id:            ${details.id}${details.enabled ? "" : " (disabled)"}`,
    `file:          ${details.path ?? "(built-in)"}`,
    `description:   ${details.description ?? "(none)"}`,
    `models:        ${details.models?.join(", ") ?? "(the configuration's defaults.models)"}`,
    `keywords:      ${listText(details.keywords)}`,
    `example tasks: ${listText(details.exampleTasks)}`,
    `not for tasks: ${listText(details.notForTasks)}`,
    `delegation:    ${details.delegation}`,
    `sub-agents:    ${listText(details.agents)}`,
    "",
    details.systemPrompt,
  ];
  streams.stdout.write(`${lines.join("\n")}\n`);
  return exitCodes.success;
}

function listText(items: readonly string[]): string {
  return items.length === 0 ? "(none)" : items.map((item) => JSON.stringify(item)).join(", ");
}

function listLine(agent: AgentSummary, all: readonly AgentSummary[]): string {
  const width = Math.max(...all.map((candidate) => candidate.id.length));
  const where = agent.path === null ? "(built-in)" : relativeOrAbsolute(agent.path);
  const description = (agent.description ?? "").split("\n")[0] ?? "";
  return `${agent.id.padEnd(width)}  ${agent.enabled ? "enabled " : "disabled"}  ${where}${description === "" ? "" : `  ${description}`}\n`;
}

function relativeOrAbsolute(path: string): string {
  const shown = relative(process.cwd(), path);
  return shown.startsWith("..") ? path : shown;
}

async function validateAgents(
  options: LoadAgentRegistryOptions,
  json: boolean,
  streams: CliStreams,
): Promise<number> {
  const { scanAgentRegistry } = await import("../agents/scan-agent-registry.js");
  const scan = await scanAgentRegistry({ ...options, checkReferences: true });
  const agents = scan.registry.list().map((agent) => agent.id);
  if (json) {
    streams.stdout.write(
      `${JSON.stringify({ ok: scan.problems.length === 0, files: scan.files, agents, problems: scan.problems })}\n`,
    );
  } else {
    for (const problem of scan.problems) streams.stdout.write(problemLine(problem));
    const files = `${scan.files.length} agent file${scan.files.length === 1 ? "" : "s"}`;
    streams.stdout.write(
      scan.problems.length === 0
        ? `ok: ${files}, ${agents.length} agents (${agents.join(", ")})\n`
        : `${scan.problems.length} problem${scan.problems.length === 1 ? "" : "s"} in ${new Set(scan.problems.map((problem) => problem.file)).size} of ${files}\n`,
    );
  }
  return scan.problems.length === 0 ? exitCodes.success : exitCodes.invalidInput;
}

function problemLine(problem: AgentProblem): string {
  const where = `${relativeOrAbsolute(problem.file)}${problem.line === null ? "" : `:${problem.line}`}`;
  return `${where}: ${problem.key === null ? "" : `${problem.key}: `}${problem.message} [${problem.code}]\n`;
}
