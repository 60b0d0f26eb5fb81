import { CharterError } from "../foundation/charter-error.js";
import type { AIAgentResult } from "../session/agent-result.js";

/**
 * The result of a run that failed before its session could start (bad agent file or configuration, a tool
 * server that would not start): still a full AIAgentResult with a typed outcome, a report and an error code.
 */
export function preflightFailureResult(runId: string, error: unknown, now: number): AIAgentResult {
  const code = CharterError.isInstance(error) ? error.code : "INTERNAL_ERROR";
  const message = error instanceof Error ? error.message : String(error);
  return {
    success: false,
    outcome: "FAILED_PREFLIGHT",
    finalReport: {
      status: "failure",
      source: "synthetic",
      format: "text",
      content: `The run could not start: ${message}`,
      metadata: { reason: "preflight_failed", code },
      ts: new Date(now).toISOString(),
    },
    error: { code, message },
    conversation: [],
    accounting: [],
    runId,
    contractId: null,
    contractHash: null,
    turns: 0,
    toolsUsed: [],
    tokens: { input: 0, output: 0 },
    costUsd: null,
    transcript: { entries: 0, headHash: null, directory: null },
  };
}
