import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodes } from "./exit-code.js";
import { sharedFlags } from "./shared-flags.js";

const flags = {
  config: sharedFlags.config,
  json: { ...sharedFlags.json, description: "Print the tools as one JSON document." },
} as const;

/** `charter tools [agent.md]`: every tool the model would see, with its schema summary and idempotency class. */
export const toolsCommand = defineCommand({
  name: "tools",
  summary: "Start the configured tool servers and list every tool as the model sees it",
  description:
    "Starts the MCP servers and REST tools the agent's tools list names (with no agent file: every configured one), lists each tool under the name the model calls (<server>__<tool>) with its description, its parameters (name, type, required) and its idempotency class (read-only, idempotent, destructive, unknown) with where that class came from, then stops the servers. Exit 3 when a tool server fails to start.",
  positionals: [
    {
      name: "agent-id|agent.md",
      optional: true,
      description:
        "The agent whose tools to list (a registry agent id or an agent file); without it, every configured tool server.",
    },
  ],
  flags,
  examples: ["charter tools", "charter tools agent.md --json"],
  run: listTools,
});

async function listTools(
  positionals: readonly string[],
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const { loadAgentSetup } = await import("../runner/load-agent-setup.js");
  const { listAgentTools } = await import("../runner/list-agent-tools.js");
  const { createAgentCatalog } = await import("../agents/create-agent-catalog.js");
  const options = {
    agentCatalog: createAgentCatalog(),
    ...(positionals[0] !== undefined ? { agentPath: positionals[0] } : {}),
    ...(values.config !== undefined ? { configPath: values.config } : {}),
    ...(streams.binaryDirectory !== undefined ? { binaryDirectory: streams.binaryDirectory } : {}),
  };
  const { loaded, agent } = await loadAgentSetup(options);
  const listed = await listAgentTools(loaded.configuration, agent, {});
  if (values.json) streams.stdout.write(`${JSON.stringify(listed)}\n`);
  else {
    if (listed.tools.length === 0)
      streams.stdout.write("no tools: no MCP server or REST tool is configured\n");
    for (const tool of listed.tools) {
      streams.stdout.write(`${tool.name}  [${tool.idempotency.replace("_", "-")}]\n`);
      if (tool.description !== "") streams.stdout.write(`  ${tool.description.split("\n")[0]}\n`);
      const parameters = tool.parameters.map(
        (parameter) => `${parameter.name}${parameter.required ? "" : "?"}: ${parameter.type}`,
      );
      streams.stdout.write(`  parameters: ${parameters.length === 0 ? "(none)" : parameters.join(", ")}\n`);
      streams.stdout.write(`  idempotency: ${tool.reason}\n`);
    }
  }
  // Built-in tools and function tools are not started here; an entry naming nothing is shown, not hidden.
  for (const reference of listed.unmatched)
    streams.stderr.write(
      `charter: '${reference}' in the tools list names no configured MCP server or REST tool\n`,
    );
  return exitCodes.success;
}
