import { pieces, type ScriptedAnswer } from "./scripted-openai-answer.js";
import { requestBodyModel } from "./scripted-openai-chat-wire.js";
import { argumentsObject, type ScriptedWireFormat, sseEvent, usageCounts } from "./scripted-wire-format.js";

const stopReasons: Readonly<Record<string, string>> = {
  stop: "end_turn",
  tool_calls: "tool_use",
  length: "max_tokens",
  content_filter: "refusal",
};

function stopReason(answer: ScriptedAnswer): string {
  return stopReasons[answer.finishReason] ?? answer.finishReason;
}

function signature(answer: ScriptedAnswer): string {
  // Anthropic signs every thinking block; a script that names no signature still gets a stable one.
  return answer.reasoningSignature ?? `scripted-signature-${answer.answerNumber}`;
}

function usage(answer: ScriptedAnswer): Record<string, number> {
  const counts = usageCounts(answer);
  // Anthropic counts cached reads and writes apart from `input_tokens`.
  return {
    input_tokens: Math.max(0, counts.prompt - counts.cachedRead - counts.cacheWrite),
    output_tokens: counts.completion,
    cache_creation_input_tokens: counts.cacheWrite,
    cache_read_input_tokens: counts.cachedRead,
  };
}

function contentBlocks(answer: ScriptedAnswer): Record<string, unknown>[] {
  const blocks: Record<string, unknown>[] = [];
  if (answer.reasoning !== "") {
    blocks.push({ type: "thinking", thinking: answer.reasoning, signature: signature(answer) });
  }
  if (answer.text !== "") blocks.push({ type: "text", text: answer.text });
  for (const call of answer.calls) {
    blocks.push({
      type: "tool_use",
      id: call.id,
      name: call.name,
      input: argumentsObject(call.argumentsText),
    });
  }
  return blocks;
}

/**
 * Anthropic Messages (`POST /v1/messages`): content blocks (thinking with its signature, text, tool_use),
 * and as a stream the named events `message_start`, `content_block_start` / `_delta` / `_stop`,
 * `message_delta` and `message_stop`; errors are `{ type: "error", error: { type, message } }`, mid-stream
 * as an `error` event.
 */
export const anthropicWire: ScriptedWireFormat = {
  name: "anthropic",
  basePath: "/v1",
  matches: (path) => path === "/v1/messages",
  requestedModel: (request) => requestBodyModel(request.body),
  streams: (request) => (request.body as { stream?: unknown } | null)?.stream === true,
  answerBody: (answer) => ({
    id: `msg_${answer.answerNumber}`,
    type: "message",
    role: "assistant",
    model: answer.model,
    content: contentBlocks(answer),
    stop_reason: stopReason(answer),
    stop_sequence: null,
    usage: usage(answer),
  }),
  answerFrames(answer) {
    const frames = [
      sseEvent("message_start", {
        type: "message_start",
        message: {
          id: `msg_${answer.answerNumber}`,
          type: "message",
          role: "assistant",
          model: answer.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage(answer), output_tokens: 1 },
        },
      }),
    ];
    let index = 0;
    const block = (start: Record<string, unknown>, deltas: Record<string, unknown>[]) => {
      frames.push(
        sseEvent("content_block_start", { type: "content_block_start", index, content_block: start }),
      );
      for (const delta of deltas) {
        frames.push(sseEvent("content_block_delta", { type: "content_block_delta", index, delta }));
      }
      frames.push(sseEvent("content_block_stop", { type: "content_block_stop", index }));
      index += 1;
    };
    if (answer.reasoning !== "") {
      block({ type: "thinking", thinking: "", signature: "" }, [
        ...pieces(answer.reasoning, answer.chunkSize).map((thinking) => ({
          type: "thinking_delta",
          thinking,
        })),
        { type: "signature_delta", signature: signature(answer) },
      ]);
    }
    if (answer.text !== "") {
      block(
        { type: "text", text: "" },
        pieces(answer.text, answer.chunkSize).map((text) => ({ type: "text_delta", text })),
      );
    }
    for (const call of answer.calls) {
      block(
        { type: "tool_use", id: call.id, name: call.name, input: {} },
        pieces(call.argumentsText, answer.chunkSize).map((partial) => ({
          type: "input_json_delta",
          partial_json: partial,
        })),
      );
    }
    frames.push(
      sseEvent("message_delta", {
        type: "message_delta",
        delta: { stop_reason: stopReason(answer), stop_sequence: null },
        usage: { output_tokens: usageCounts(answer).completion },
      }),
      sseEvent("message_stop", { type: "message_stop" }),
    );
    return frames;
  },
  streamEnd: "",
  streamContentType: "text/event-stream",
  errorFrame: (payload) => sseEvent("error", payload),
  defaultErrorBody: (status) => ({
    type: "error",
    error: { type: "api_error", message: `scripted error with status ${status}` },
  }),
};
