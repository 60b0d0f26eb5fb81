import { createdSeconds, pieces, type ScriptedAnswer } from "./scripted-openai-answer.js";
import { requestBodyModel } from "./scripted-openai-chat-wire.js";
import { type ScriptedWireFormat, sseEvent, usageCounts } from "./scripted-wire-format.js";

function usage(answer: ScriptedAnswer): Record<string, unknown> {
  const counts = usageCounts(answer);
  return {
    input_tokens: counts.prompt,
    input_tokens_details: { cached_tokens: counts.cachedRead },
    output_tokens: counts.completion,
    output_tokens_details: { reasoning_tokens: counts.reasoning },
    total_tokens: counts.prompt + counts.completion,
  };
}

function ids(answer: ScriptedAnswer) {
  const n = answer.answerNumber;
  return {
    response: `resp_${n}`,
    reasoning: `rs_${n}`,
    message: `msg_${n}`,
    call: (index: number) => `fc_${n}_${index}`,
  };
}

function reasoningItem(answer: ScriptedAnswer, withSummary: boolean): Record<string, unknown> {
  return {
    type: "reasoning",
    id: ids(answer).reasoning,
    // The encrypted reasoning is what a stateless client passes back; the script's signature stands in for it.
    encrypted_content: answer.reasoningSignature,
    summary: withSummary ? [{ type: "summary_text", text: answer.reasoning }] : [],
  };
}

function messageItem(answer: ScriptedAnswer, complete: boolean): Record<string, unknown> {
  return {
    type: "message",
    id: ids(answer).message,
    status: complete ? "completed" : "in_progress",
    role: "assistant",
    content: complete ? [{ type: "output_text", text: answer.text, annotations: [] }] : [],
  };
}

function callItem(answer: ScriptedAnswer, index: number, complete: boolean): Record<string, unknown> {
  const call = answer.calls[index]!;
  return {
    type: "function_call",
    id: ids(answer).call(index),
    call_id: call.id,
    name: call.name,
    arguments: complete ? call.argumentsText : "",
    status: complete ? "completed" : "in_progress",
  };
}

function outputItems(answer: ScriptedAnswer): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  if (answer.reasoning !== "") items.push(reasoningItem(answer, true));
  if (answer.text !== "") items.push(messageItem(answer, true));
  for (let index = 0; index < answer.calls.length; index++) items.push(callItem(answer, index, true));
  return items;
}

function responseObject(answer: ScriptedAnswer, complete: boolean): Record<string, unknown> {
  const truncated = answer.finishReason === "length";
  return {
    id: ids(answer).response,
    object: "response",
    created_at: createdSeconds,
    status: !complete ? "in_progress" : truncated ? "incomplete" : "completed",
    model: answer.model,
    output: complete ? outputItems(answer) : [],
    incomplete_details: complete && truncated ? { reason: "max_output_tokens" } : null,
    error: null,
    ...(complete ? { usage: usage(answer) } : {}),
  };
}

/**
 * The OpenAI Responses API (`POST /v1/responses`): output items (reasoning with its summary and encrypted
 * content, the message, function calls), and as a stream the typed events from `response.created` through
 * `response.completed`, each with a `sequence_number`.
 */
export const responsesWire: ScriptedWireFormat = {
  name: "openai-responses",
  basePath: "/v1",
  matches: (path) => path === "/v1/responses",
  requestedModel: (request) => requestBodyModel(request.body),
  streams: (request) => (request.body as { stream?: unknown } | null)?.stream === true,
  answerBody: (answer) => responseObject(answer, true),
  answerFrames(answer) {
    const frames: string[] = [];
    const send = (type: string, payload: Record<string, unknown>) =>
      frames.push(sseEvent(type, { type, sequence_number: frames.length, ...payload }));
    const { message, reasoning } = ids(answer);
    send("response.created", { response: responseObject(answer, false) });
    let outputIndex = 0;
    if (answer.reasoning !== "") {
      const index = outputIndex++;
      send("response.output_item.added", {
        output_index: index,
        item: { ...reasoningItem(answer, false), encrypted_content: null },
      });
      send("response.reasoning_summary_part.added", {
        item_id: reasoning,
        output_index: index,
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      });
      for (const delta of pieces(answer.reasoning, answer.chunkSize)) {
        send("response.reasoning_summary_text.delta", {
          item_id: reasoning,
          output_index: index,
          summary_index: 0,
          delta,
        });
      }
      send("response.reasoning_summary_part.done", {
        item_id: reasoning,
        output_index: index,
        summary_index: 0,
        part: { type: "summary_text", text: answer.reasoning },
      });
      send("response.output_item.done", { output_index: index, item: reasoningItem(answer, true) });
    }
    if (answer.text !== "") {
      const index = outputIndex++;
      send("response.output_item.added", { output_index: index, item: messageItem(answer, false) });
      send("response.content_part.added", {
        item_id: message,
        output_index: index,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] },
      });
      for (const delta of pieces(answer.text, answer.chunkSize)) {
        send("response.output_text.delta", {
          item_id: message,
          output_index: index,
          content_index: 0,
          delta,
          logprobs: [],
        });
      }
      send("response.output_text.done", {
        item_id: message,
        output_index: index,
        content_index: 0,
        text: answer.text,
      });
      send("response.output_item.done", { output_index: index, item: messageItem(answer, true) });
    }
    answer.calls.forEach((call, callIndex) => {
      const index = outputIndex++;
      const itemId = ids(answer).call(callIndex);
      send("response.output_item.added", { output_index: index, item: callItem(answer, callIndex, false) });
      for (const delta of pieces(call.argumentsText, answer.chunkSize)) {
        send("response.function_call_arguments.delta", { item_id: itemId, output_index: index, delta });
      }
      send("response.function_call_arguments.done", {
        item_id: itemId,
        output_index: index,
        arguments: call.argumentsText,
      });
      send("response.output_item.done", { output_index: index, item: callItem(answer, callIndex, true) });
    });
    send(answer.finishReason === "length" ? "response.incomplete" : "response.completed", {
      response: responseObject(answer, true),
    });
    return frames;
  },
  streamEnd: "",
  streamContentType: "text/event-stream",
  errorFrame: (payload) => sseEvent("error", payload),
  defaultErrorBody: (status) => ({
    error: {
      message: `scripted error with status ${status}`,
      type: "scripted_error",
      param: null,
      code: null,
    },
  }),
};
