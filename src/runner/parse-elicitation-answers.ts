import { CharterError } from "../foundation/charter-error.js";
import type { PendingApproval } from "../session/pending-approval.js";
import type { McpElicitationAnswer } from "../tools/sources/mcp-client-features.js";

function invalid(value: string, reason: string, message: string, extra: Record<string, unknown> = {}) {
  return new CharterError("ARGUMENT_INVALID", `--answer ${JSON.stringify(value.slice(0, 200))}: ${message}`, {
    details: { argument: "answer", value: value.slice(0, 200), reason, ...extra },
  });
}

function answerOf(value: string, text: string): McpElicitationAnswer {
  const trimmed = text.trim();
  if (trimmed === "decline" || trimmed === "cancel") return { action: trimmed };
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch (error) {
    throw invalid(value, "not_json", `the answer is not JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw invalid(
      value,
      "not_an_object",
      "the answer must be a JSON object (the form's fields), decline or cancel",
    );
  }
  return { action: "accept", content: parsed as Record<string, unknown> };
}

/**
 * `charter resume --answer` values, by the call whose question they answer. Each is `CALL-ID=ANSWER`, or a bare
 * `ANSWER` when the run waits on exactly one question; `ANSWER` is a JSON object (the form's fields, which the
 * server checks against its schema), `decline` or `cancel`. Every answer must name a call whose question the run
 * waits on: anything else is ARGUMENT_INVALID and the run is left as it was.
 */
export function parseElicitationAnswers(
  values: readonly string[],
  pending: readonly PendingApproval[],
): Map<string, McpElicitationAnswer> {
  const questions = pending
    .filter((approval) => approval.question !== undefined)
    .map((approval) => approval.callId);
  const answers = new Map<string, McpElicitationAnswer>();
  for (const value of values) {
    const separator = value.indexOf("=");
    const bare = separator <= 0 || /^\s*[[{"]/.test(value);
    let callId: string;
    let text: string;
    if (bare) {
      if (questions.length !== 1) {
        throw invalid(
          value,
          "call_id_needed",
          `the run waits on ${questions.length} questions: write CALL-ID=ANSWER`,
          {
            pending: questions,
          },
        );
      }
      callId = questions[0]!;
      text = value;
    } else {
      callId = value.slice(0, separator);
      text = value.slice(separator + 1);
    }
    if (!questions.includes(callId)) {
      throw invalid(value, "not_pending", `the run waits on no question of ${callId}`, {
        callId,
        pending: questions,
      });
    }
    answers.set(callId, answerOf(value, text));
  }
  return answers;
}
