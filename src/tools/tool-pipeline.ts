import type { ToolInvocation } from "../contract/agent-message.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { ToolCallPolicy } from "./tool-call-policy.js";
import type { RegisteredTool } from "./tool-definition.js";
import type { ToolExecutionResult } from "./tool-execution-result.js";
import type { ToolOutputStore } from "./tool-output-store.js";
import type { ToolRegistry } from "./tool-registry.js";

/** Everything a stage may need to decide about one tool call. One object per call, shared by all stages. */
export interface ToolCallContext {
  readonly invocation: ToolInvocation;
  readonly registry: ToolRegistry;
  /** The registry entry; `null` until `lookupStage` has found it. */
  tool: RegisteredTool | null;
  readonly policy: ToolCallPolicy;
  /** The name of the tool executed before this call in the run, for `cycle_forbid`; `null` for the first. */
  readonly previousToolName: string | null;
  /** Aborts when the run is interrupted. */
  readonly signal: AbortSignal;
  readonly runId: string;
  /**
   * The runtime's id for this call, handed to the tool and the output store. The result's `call_id` is always
   * the invocation's id, which is what the tool message must answer.
   */
  readonly callId: string;
  readonly environment: RuntimeEnvironment;
  /** Where oversized outputs go; `null` truncates them instead. */
  readonly outputStore: ToolOutputStore | null;
}

/**
 * One step of the tool pipeline. A stage either answers the call itself (refusing it, or serving it) or calls
 * `next` and may post-process what comes back. Stages run outermost first.
 */
export type ToolStage = (
  call: ToolCallContext,
  next: () => Promise<ToolExecutionResult>,
) => Promise<ToolExecutionResult>;

/** What runs when every stage has passed the call on. */
export type ToolTerminal = (call: ToolCallContext) => Promise<ToolExecutionResult>;

/** A composed pipeline. It never rejects: every failure is a frozen result with status `failed`. */
export type ToolPipeline = (call: ToolCallContext) => Promise<ToolExecutionResult>;
