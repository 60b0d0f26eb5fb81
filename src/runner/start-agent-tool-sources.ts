import type { resolveModelTargets } from "../config/resolve-model-targets.js";
import type { ModelClient } from "../model/model-client.js";
import type { McpElicitationRequest } from "../tools/sources/mcp-client-features.js";
import { createSamplingRunner } from "./create-sampling-runner.js";
import type { RunContext } from "./run-context.js";
import { startToolSources } from "./start-tool-sources.js";

/**
 * Starts the tool sources of one agent of the run (its MCP servers and REST tools) with what the run adds to
 * them: its correlation id, MCP sampling served by the agent's own model targets, elicitation for the top-level
 * agent only, and `--trace-mcp` redacted. The caller closes the sources it gets back, whatever happens next.
 */
export function startAgentToolSources(
  context: RunContext,
  toolReferences: readonly string[],
  agent: {
    readonly targets: ReturnType<typeof resolveModelTargets>;
    readonly models: readonly ModelClient[];
    readonly callPath: string;
    readonly topLevel: boolean;
  },
): ReturnType<typeof startToolSources> {
  const { environment, redactor } = context;
  const { targets, models, callPath, topLevel } = agent;
  const correlationId = context.options.correlationId;
  const traceMcp = context.options.traceMcp;
  return startToolSources(toolReferences, context.loaded.configuration, {
    cwd: context.cwd,
    environment,
    // Sub-agents run under the same options: their tools get the same correlation id as the top-level run's.
    ...(correlationId === undefined ? {} : { correlationId }),
    sampling: createSamplingRunner({ targets, models, environment, redactor, callPath }),
    // A server's question stops the top-level run for a human answer (`charter resume --answer`); a sub-agent
    // has no one to ask, so its servers are not offered elicitation.
    ...(topLevel
      ? {
          elicitation: (request: McpElicitationRequest) =>
            context.resume?.answers?.get(request.callId) ?? null,
        }
      : {}),
    ...(traceMcp === undefined
      ? {}
      : {
          traceMcp: (server: string, direction: "send" | "receive", message: unknown) =>
            traceMcp(
              redactor.redactString(
                `[mcp ${server}] ${direction === "send" ? ">>" : "<<"} ${JSON.stringify(redactor.redactValue(message))}`,
              ),
            ),
        }),
  });
}
