import type { ContractModelTargetInput } from "../contract/contract-factory-input.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { SecretRedactor } from "../foundation/secret-redactor.js";
import type { ModelClient } from "../model/model-client.js";
import { finalReportText } from "../session/final-report.js";
import type { McpSamplingHandler } from "../tools/sources/mcp-client-features.js";
import { type PreparedAgent, prepareAgent } from "./prepare-agent.js";

const samplingSystemPrompt = "You answer a request an MCP tool server made while it was running a tool.";

/**
 * Serves MCP sampling requests (`sampling/createMessage`) with the run's own model targets: each request is a
 * one-turn child run on those targets, with tools forbidden and at most the server's `maxTokens` output tokens,
 * under its own contract (like `tool_output` extraction). Its accounting entries go back to the tool call that
 * was running (their call path ends in `/sampling/<server>`), so the run's transcript and cost include them.
 */
export function createSamplingRunner(options: {
  readonly targets: readonly ContractModelTargetInput[];
  readonly models: readonly ModelClient[];
  readonly environment: RuntimeEnvironment;
  readonly redactor: SecretRedactor;
  readonly callPath: string;
}): McpSamplingHandler {
  // One prepared agent per server, system prompt and token limit: a contract is built once for each.
  const agents = new Map<string, PreparedAgent>();
  return async (request) => {
    const systemPrompt = request.systemPrompt ?? samplingSystemPrompt;
    const key = JSON.stringify([request.server, systemPrompt, request.maxTokens]);
    let agent = agents.get(key);
    if (agent === undefined) {
      agent = prepareAgent({
        agent: {
          id: `mcp-sampling-${request.server}`,
          systemPrompt,
          settings: {
            toolPolicy: "forbidden",
            maxTurns: 1,
            maxRetries: 2,
            maxOutputTokens: request.maxTokens,
            output: { format: "text" },
          },
        },
        targets: options.targets,
        models: options.models,
        environment: options.environment,
        redactor: options.redactor,
        trace: {
          callPath: `${options.callPath}/sampling/${request.server}`,
          parentTxnId: null,
          originTxnId: null,
        },
      });
      agents.set(key, agent);
    }
    const { result } = await agent.run({ prompt: request.prompt, signal: request.signal });
    const answered = result.success && result.finalReport !== null;
    const last = [...result.accounting].reverse().find((entry) => entry.type === "llm") as
      | { provider?: string; model?: string }
      | undefined;
    return {
      text: answered ? finalReportText(result.finalReport!) : null,
      model: last?.provider !== undefined ? `${last.provider}/${last.model ?? ""}` : "unknown",
      accounting: result.accounting,
    };
  };
}
