import type { Configuration } from "../config/configuration-schema.js";
import { contractDefaults } from "../contract/contract-defaults.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { SecretRedactor } from "../foundation/secret-redactor.js";
import { createDefaultPipeline } from "../tools/create-default-pipeline.js";
import { createToolCallExecutor } from "../tools/create-tool-call-executor.js";
import type { ToolCallPolicy } from "../tools/tool-call-policy.js";
import type { ToolSource } from "../tools/tool-definition.js";
import { freezeToolResult, type ToolExecutionResult } from "../tools/tool-execution-result.js";
import { ToolRegistry } from "../tools/tool-registry.js";
import { configureToolIdempotency } from "./configure-tool-idempotency.js";
import { type IdempotencyClass, idempotencyClassOf } from "./guard-tool-calls.js";
import { startToolSources } from "./start-tool-sources.js";

export interface ToolCallRequest {
  /** The tool as a model would call it: `<server>__<tool>`, `rest__<name>`. */
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** The call's id (in the result and the tool's context). */
  readonly callId: string;
  /** The run the call belongs to (a workflow run). */
  readonly runId: string;
  /** The configuration that defines the tool's server, its timeout and its idempotency class. */
  readonly configuration: Configuration;
  readonly cwd: string;
  readonly environment: RuntimeEnvironment;
  readonly redactor: SecretRedactor;
  readonly signal: AbortSignal;
  /**
   * The call may have run already (its process died while it ran): it runs again only when its tool is read-only
   * or idempotent; otherwise it is not run and fails with TOOL_OUTCOME_UNKNOWN.
   */
  readonly mayHaveRun?: boolean;
}

export interface ToolCallOutcome {
  /** Frozen and redacted; failures are data (status `failed`, an error code), never exceptions. */
  readonly result: ToolExecutionResult;
  readonly idempotency: IdempotencyClass;
}

/**
 * One tool call without a model (a workflow's tool step), through the same pipeline a model's call goes through:
 * the tool's server started as a run starts it, lookup (TOOL_NOT_FOUND as data), input validation, the policy (only
 * this tool allowed), execution under the configured `toolTimeout`, observation (outputs over
 * `toolResponseMaxBytes` cut) and audit. The configuration's `readOnlyTools`, `idempotentTools` and
 * `destructiveTools` decide its class. A server that does not start throws MCP_SERVER_FAILED, as it stops a run.
 */
export async function runToolCall(request: ToolCallRequest): Promise<ToolCallOutcome> {
  const defaults = request.configuration.defaults;
  const sources: ToolSource[] = [];
  try {
    const started = await startToolSources([request.name], request.configuration, {
      cwd: request.cwd,
      environment: request.environment,
    });
    sources.push(...started.sources);
    const tools = configureToolIdempotency(started.tools, {
      readOnlyTools: defaults.readOnlyTools ?? [],
      idempotentTools: defaults.idempotentTools ?? [],
      destructiveTools: defaults.destructiveTools ?? [],
    });
    const registry = new ToolRegistry(tools);
    // A workflow's tool step has no model: the call is the workflow's own.
    const invocation = {
      id: request.callId,
      name: request.name,
      arguments: { ...request.arguments },
      source_model: "workflow",
      raw_payload: null,
    };
    const manifest = registry.manifest().find((tool) => tool.name === request.name);
    const idempotency = idempotencyClassOf(manifest, new Set(defaults.destructiveTools ?? []));
    const repeatable = idempotency === "read_only" || idempotency === "idempotent";
    if (request.mayHaveRun === true && !repeatable) {
      return {
        idempotency,
        result: freezeToolResult({
          call_id: request.callId,
          tool_name: request.name,
          status: "failed",
          error_code: "TOOL_OUTCOME_UNKNOWN",
          content: `(tool failed: outcome unknown: ${request.name} may have run when the process stopped, and it is ${idempotency === "unknown" ? "not declared read-only or idempotent" : idempotency}, so it was not run again)`,
          executed: false,
          latency_ms: 0,
          characters_in: 0,
          characters_out: 0,
          handle: null,
          source: manifest?.source ?? { kind: "unknown", server: null, tool: request.name },
        }),
      };
    }
    const policy: ToolCallPolicy = {
      allowed_tools: [request.name],
      tool_policy: "optional",
      cycle_forbid: [],
      tool_timeout_ms: defaults.toolTimeout ?? contractDefaults.toolTimeout,
      tool_output_budget: {
        max_bytes_per_call: defaults.toolResponseMaxBytes ?? contractDefaults.toolResponseMaxBytes,
        truncation_marker: contractDefaults.truncationMarker,
        summarizer_model: null,
      },
    };
    const execute = createToolCallExecutor({
      registry,
      policy,
      environment: request.environment,
      runId: request.runId,
      outputStore: null,
      pipeline: createDefaultPipeline(),
    });
    const result = await execute(invocation, { signal: request.signal, previousTool: null });
    const redacted = request.redactor.redactValue(result) as ToolExecutionResult;
    return { idempotency, result: redacted === result ? result : freezeToolResult(redacted) };
  } finally {
    await Promise.allSettled(sources.map((source) => source.close()));
  }
}
