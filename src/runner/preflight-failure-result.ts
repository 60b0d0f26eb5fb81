import type { SecretRedactor } from "../foundation/secret-redactor.js";
import type { AIAgentResult } from "../session/agent-result.js";
import { sessionErrorFrom } from "../session/session-error-from.js";

/**
 * The result of a run that failed before its session could start (bad agent file or configuration, a tool
 * server that would not start, a `tools` entry that names nothing): still a full AIAgentResult with a typed
 * outcome, a report and an error code, and the error's `details` so that callers need not read the message.
 * With the run's redactor, secrets a message or detail may quote (a server's stderr) are redacted.
 */
export function preflightFailureResult(
  runId: string,
  error: unknown,
  now: number,
  redactor?: SecretRedactor,
): AIAgentResult {
  const raw = sessionErrorFrom(error);
  const code = raw.code;
  const message = redactor === undefined ? raw.message : redactor.redactString(raw.message);
  const rawDetails = raw.details ?? {};
  const details =
    redactor === undefined ? rawDetails : (redactor.redactValue(rawDetails) as Record<string, unknown>);
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
    error: { code, message, ...(Object.keys(details).length > 0 ? { details } : {}) },
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
