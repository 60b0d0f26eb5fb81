import { completionBody, completionChunks, type ScriptedAnswer } from "./scripted-openai-answer.js";
import { requestBodyModel } from "./scripted-openai-chat-wire.js";
import { type ScriptedWireFormat, sseData } from "./scripted-wire-format.js";

function reasoningDetail(answer: ScriptedAnswer, text: string, signed: boolean): Record<string, unknown> {
  return {
    type: "reasoning.text",
    text,
    ...(signed && answer.reasoningSignature !== null ? { signature: answer.reasoningSignature } : {}),
    format: "anthropic-claude-v1",
    index: 0,
  };
}

/** Moves OpenAI-compatible `reasoning_content` to OpenRouter's `reasoning` and `reasoning_details`. */
function withOpenRouterReasoning(
  carrier: Record<string, unknown>,
  answer: ScriptedAnswer,
  signed: boolean,
): Record<string, unknown> {
  const { reasoning_content: reasoning, ...rest } = carrier;
  if (typeof reasoning !== "string") return carrier;
  return { ...rest, reasoning, reasoning_details: [reasoningDetail(answer, reasoning, signed)] };
}

type Choice = { message?: Record<string, unknown>; delta?: Record<string, unknown> };

/**
 * OpenRouter (`POST /api/v1/chat/completions`): Chat Completions with reasoning in `reasoning` and
 * `reasoning_details` (the signature on the last detail), usage always in the last stream chunk, and
 * errors as `{ error: { code, message, metadata } }` whose `code` is the HTTP status.
 */
export const openRouterWire: ScriptedWireFormat = {
  name: "openrouter",
  basePath: "/api/v1",
  matches: (path) => path === "/api/v1/chat/completions",
  requestedModel: (request) => requestBodyModel(request.body),
  streams: (request) => (request.body as { stream?: unknown } | null)?.stream === true,
  answerBody(answer) {
    const body = completionBody(answer);
    const [choice] = body.choices as Choice[];
    return {
      ...body,
      choices: [{ ...choice, message: withOpenRouterReasoning(choice!.message!, answer, true) }],
    };
  },
  answerFrames(answer) {
    const chunks = completionChunks(answer, true);
    const lastReasoning = chunks.findLastIndex(
      (chunk) =>
        ((chunk.choices as Choice[])[0]?.delta as { reasoning_content?: unknown } | undefined)
          ?.reasoning_content !== undefined,
    );
    return chunks.map((chunk, index) => {
      const [choice] = chunk.choices as Choice[];
      if (choice?.delta === undefined) return sseData(chunk);
      return sseData({
        ...chunk,
        choices: [
          { ...choice, delta: withOpenRouterReasoning(choice.delta, answer, index === lastReasoning) },
        ],
      });
    });
  },
  streamEnd: "data: [DONE]\n\n",
  streamContentType: "text/event-stream",
  errorFrame: sseData,
  defaultErrorBody: (status) => ({
    error: { code: status, message: `scripted error with status ${status}` },
  }),
};
