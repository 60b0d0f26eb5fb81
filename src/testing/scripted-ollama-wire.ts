import { pieces, type ScriptedAnswer } from "./scripted-openai-answer.js";
import { requestBodyModel } from "./scripted-openai-chat-wire.js";
import { argumentsObject, type ScriptedWireFormat, usageCounts } from "./scripted-wire-format.js";

const createdAt = "2026-01-01T00:00:00Z";

function doneReason(answer: ScriptedAnswer): string {
  // Ollama reports "stop" for an answer with tool calls too.
  return answer.finishReason === "length"
    ? "length"
    : answer.finishReason === "tool_calls"
      ? "stop"
      : answer.finishReason;
}

function toolCalls(answer: ScriptedAnswer): Record<string, unknown>[] {
  return answer.calls.map((call) => ({
    ...(call.idGiven ? { id: call.id } : {}),
    function: { name: call.name, arguments: argumentsObject(call.argumentsText) },
  }));
}

function finalFields(answer: ScriptedAnswer): Record<string, unknown> {
  const counts = usageCounts(answer);
  return {
    done: true,
    done_reason: doneReason(answer),
    total_duration: 1_000_000,
    prompt_eval_count: counts.prompt,
    eval_count: counts.completion,
  };
}

function line(payload: unknown): string {
  return `${JSON.stringify(payload)}\n`;
}

/**
 * Ollama's own chat API (`POST /api/chat`): `message.thinking` for reasoning, tool call arguments as
 * objects (ids only when the script gives them), and as a stream NDJSON lines ending with `done: true`;
 * errors are `{ "error": "<text>" }`, also as a line mid-stream.
 */
export const ollamaWire: ScriptedWireFormat = {
  name: "ollama",
  basePath: "/api",
  matches: (path) => path === "/api/chat",
  requestedModel: (request) => requestBodyModel(request.body),
  // Ollama streams unless told not to.
  streams: (request) => (request.body as { stream?: unknown } | null)?.stream !== false,
  answerBody(answer) {
    const calls = toolCalls(answer);
    return {
      model: answer.model,
      created_at: createdAt,
      message: {
        role: "assistant",
        content: answer.text,
        ...(answer.reasoning === "" ? {} : { thinking: answer.reasoning }),
        ...(calls.length === 0 ? {} : { tool_calls: calls }),
      },
      ...finalFields(answer),
    };
  },
  answerFrames(answer) {
    const partial = (message: Record<string, unknown>) =>
      line({
        model: answer.model,
        created_at: createdAt,
        message: { role: "assistant", content: "", ...message },
        done: false,
      });
    const frames = pieces(answer.reasoning, answer.chunkSize).map((thinking) => partial({ thinking }));
    for (const content of pieces(answer.text, answer.chunkSize)) frames.push(partial({ content }));
    if (answer.calls.length > 0) frames.push(partial({ tool_calls: toolCalls(answer) }));
    frames.push(
      line({
        model: answer.model,
        created_at: createdAt,
        message: { role: "assistant", content: "" },
        ...finalFields(answer),
      }),
    );
    return frames;
  },
  streamEnd: "",
  streamContentType: "application/x-ndjson",
  errorFrame: line,
  defaultErrorBody: (status) => ({ error: `scripted error with status ${status}` }),
};
