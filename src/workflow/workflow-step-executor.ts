import type { StepRunResult } from "./step-run-result.js";

/**
 * What runs a step's action for the engine: each agent step a full Charter run (its own contract, transcript and
 * stored run, the workflow run its parent), each tool step one call through the tool pipeline. None of them throws
 * for what a run or a call does: failures are results.
 */
export interface WorkflowStepExecutor {
  /** A new run of the agent (a registry id or an agent file path) on the prompt, under this run id. */
  runAgent(request: {
    readonly agent: string;
    readonly prompt: string;
    readonly runId: string;
    readonly signal: AbortSignal;
  }): Promise<StepRunResult>;
  /** Continues a stored run that stopped before it ended (durable resume: no committed turn runs again). */
  continueAgent(request: { readonly runId: string; readonly signal: AbortSignal }): Promise<StepRunResult>;
  /** One tool call; `mayHaveRun`: it may have run before the process died (run again only when that is safe). */
  runTool(request: {
    readonly name: string;
    readonly arguments: Readonly<Record<string, unknown>>;
    readonly callId: string;
    readonly signal: AbortSignal;
    readonly mayHaveRun: boolean;
  }): Promise<StepRunResult>;
}
