import type { Configuration } from "../config/configuration-schema.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import { CharterError } from "../foundation/charter-error.js";
import type { startToolSources } from "./start-tool-sources.js";

/**
 * Preflight: every entry of an agent's `tools` must name something the prepared contract offers, never silently
 * nothing. A reference the tool sources did not match may still be a built-in, a sub-agent or a function tool, so
 * it is checked against the contract's manifest: TOOL_REFERENCE_DENIED when an MCP server's filter excludes it,
 * TOOL_REFERENCE_UNKNOWN when nothing has that name.
 */
export function checkToolReferences(
  contract: ExecutionContract,
  started: Pick<Awaited<ReturnType<typeof startToolSources>>, "unmatched" | "denied">,
  configuration: Configuration,
  agentId: string,
): void {
  const offered = new Set(contract.tool_manifest.map((tool) => tool.name));
  const denied = started.denied.find(({ reference }) => !offered.has(reference));
  if (denied !== undefined) {
    const definition = configuration.mcpServers[denied.server];
    throw new CharterError(
      "TOOL_REFERENCE_DENIED",
      `'${denied.reference}' in the agent's tools is excluded by the toolsAllowed/toolsDenied of MCP server '${denied.server}': remove it from tools or from the server's filter`,
      {
        details: {
          key: "tools",
          reference: denied.reference,
          server: denied.server,
          agent: agentId,
          toolsAllowed: definition?.toolsAllowed ?? null,
          toolsDenied: definition?.toolsDenied ?? null,
        },
      },
    );
  }
  const unknown = started.unmatched.find((reference) => !offered.has(reference));
  if (unknown !== undefined) {
    throw new CharterError(
      "TOOL_REFERENCE_UNKNOWN",
      `'${unknown}' in the agent's tools names no MCP server, REST tool or tool`,
      { details: { key: "tools", reference: unknown, agent: agentId } },
    );
  }
}
