import type { ToolInvocation } from "../contract/agent-message.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { ModelClient } from "../model/model-client.js";
import type { ToolExecutionResult } from "../tools/tool-execution-result.js";
import type { SessionContext } from "./session-context.js";
import type { PreflightProblem } from "./session-event.js";
import type { SessionState } from "./session-state.js";
import type { TranscriptSink } from "./transcript-sink.js";
import type { TransitionOutput } from "./transition-output.js";

/** Executes one tool call through the tool pipeline; never rejects (failures are results). */
export type ToolCallExecutor = (
  call: ToolInvocation,
  options: { readonly signal: AbortSignal; readonly previousTool: string | null; readonly turn: number },
) => Promise<ToolExecutionResult>;

export interface SessionDependencies {
  readonly contract: ExecutionContract;
  readonly context: SessionContext;
  /** One client per contract model target, in the same order. */
  readonly models: readonly ModelClient[];
  readonly executeTool: ToolCallExecutor;
  readonly transcript: TranscriptSink;
  readonly environment: RuntimeEnvironment;
  readonly runId: string;
  readonly signal?: AbortSignal;
  /** Environment checks of PRECHECK (tool servers up, targets configured). */
  readonly preflight?: () => Promise<readonly PreflightProblem[]>;
  /** Called after every transition with the new state: the event stream and progress output derive from it. */
  readonly onTransition?: (state: SessionState, output: TransitionOutput) => void;
}
