import type { ToolInvocation } from "../contract/agent-message.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { ModelClient } from "../model/model-client.js";
import type { ToolExecutionResult } from "../tools/tool-execution-result.js";
import type { CharterEvent } from "./charter-event.js";
import type { SessionCheckpoint } from "./session-checkpoint.js";
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
  /** Persists a checkpoint; awaited before the run goes on (after a continuing COMMIT, and before EXECUTE). */
  readonly checkpoint?: (checkpoint: SessionCheckpoint) => Promise<void>;
  /** Resume from this checkpoint instead of starting at PRECHECK (seed 003 INV-CP-002). */
  readonly resumeFrom?: SessionCheckpoint;
  /** The typed event stream (derived from transitions; deltas from the model stream). */
  readonly onEvent?: (event: CharterEvent) => void;
  /**
   * The bytes (base64) of tool attachments stored before this session started, by payload hash: a resumed run
   * reads them back from its raw payloads. Attachments produced by this session are known without it.
   */
  readonly attachmentData?: ReadonlyMap<string, string>;
}
