import type { ToolInvocation } from "../contract/agent-message.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import { createDefaultPipeline } from "./create-default-pipeline.js";
import type { ToolCallPolicy } from "./tool-call-policy.js";
import type { ToolExecutionResult } from "./tool-execution-result.js";
import type { ToolOutputStore } from "./tool-output-store.js";
import type { ToolPipeline } from "./tool-pipeline.js";
import type { ToolRegistry } from "./tool-registry.js";

export interface ToolCallExecutorOptions {
  readonly registry: ToolRegistry;
  /** The run's contract (or the part of it the pipeline reads). */
  readonly policy: ToolCallPolicy;
  readonly environment: RuntimeEnvironment;
  readonly runId: string;
  readonly outputStore: ToolOutputStore | null;
  /** Defaults to `createDefaultPipeline()`. */
  readonly pipeline?: ToolPipeline;
}

/** What the session calls per tool call: the run's fixed facts bound once, the per-call ones passed in. */
export type ToolCallExecutor = (
  invocation: ToolInvocation,
  options: { readonly signal: AbortSignal; readonly previousTool: string | null },
) => Promise<ToolExecutionResult>;

/** Binds a pipeline to one run. Like the pipeline, the executor never rejects. */
export function createToolCallExecutor(options: ToolCallExecutorOptions): ToolCallExecutor {
  const pipeline = options.pipeline ?? createDefaultPipeline();
  const { registry, policy, environment, runId, outputStore } = options;
  return (invocation, call) =>
    pipeline({
      invocation,
      registry,
      tool: null,
      policy,
      previousToolName: call.previousTool,
      signal: call.signal,
      runId,
      callId: invocation.id,
      environment,
      outputStore,
    });
}
