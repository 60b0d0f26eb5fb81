import type { ConversationTurn, ConversationView } from "./conversation-view.js";

/** Tool results longer than this are cut in the text view (`--json` has them whole). */
const resultPreviewCharacters = 2_000;

/** `charter runs show <id> --conversation`: the run as a person reads it, turn by turn. */
export function conversationText(view: ConversationView): string {
  const lines: string[] = [];
  for (const message of view.opening) {
    lines.push(`[${message.role}]`, message.content, "");
  }
  for (const turn of view.turns) lines.push(...turnLines(turn), "");
  lines.push(
    `== ${view.outcome ?? "not finished"}${view.error === null ? "" : ` (${view.error.code}): ${view.error.message}`}`,
  );
  const report = view.finalReport as { content?: unknown; content_json?: unknown } | null;
  if (report !== null && report !== undefined) {
    const content =
      typeof report.content === "string" ? report.content : JSON.stringify(report.content_json, null, 2);
    lines.push("[final report]", content);
  }
  return `${lines.join("\n")}\n`;
}

function turnLines(turn: ConversationTurn): string[] {
  const cost = turn.costUsd === null ? "" : `, $${turn.costUsd.toFixed(4)}`;
  const lines = [
    `== turn ${turn.turn}: ${turn.tokens.input} in / ${turn.tokens.output} out tokens, ${milliseconds(turn.latencyMs)}${cost}`,
  ];
  for (const attempt of turn.attempts) {
    const failed = attempt.status === "failed";
    // A single successful attempt is the turn itself; retries and failures are shown one by one.
    if (!failed && turn.attempts.length === 1) continue;
    const latency = attempt.latencyMs === null ? "" : ` ${milliseconds(attempt.latencyMs)}`;
    const reason = failed
      ? ` ${attempt.errorCode ?? "failed"}${attempt.errorMessage === null ? "" : `: ${attempt.errorMessage}`}`
      : "";
    lines.push(`  attempt ${attempt.attempt} ${attempt.target ?? "?"} ${attempt.status}${latency}${reason}`);
  }
  const target = turn.attempts.find((attempt) => attempt.status === "ok")?.target;
  if (turn.assistant !== null) {
    lines.push(`[assistant${target === undefined || target === null ? "" : ` ${target}`}]`);
    if (turn.assistant.reasoning !== null && turn.assistant.reasoning !== "")
      lines.push(...turn.assistant.reasoning.split("\n").map((line) => `  (reasoning) ${line}`));
    if (turn.assistant.content !== "") lines.push(turn.assistant.content);
  }
  for (const call of turn.toolCalls) {
    lines.push(`  -> ${call.name} ${JSON.stringify(call.arguments)}  (${call.callId})`);
    const latency = call.latencyMs === null ? "" : ` ${milliseconds(call.latencyMs)}`;
    const code = call.errorCode === null ? "" : ` ${call.errorCode}`;
    const result = call.result === null ? "" : `: ${preview(call.result)}`;
    lines.push(`  <- ${call.status}${code}${latency}${result}`);
  }
  return lines;
}

function preview(text: string): string {
  if (text.length <= resultPreviewCharacters) return text;
  return `${text.slice(0, resultPreviewCharacters)}... (${text.length - resultPreviewCharacters} more characters; --json shows all)`;
}

function milliseconds(value: number): string {
  return `${Math.round(value)} ms`;
}
