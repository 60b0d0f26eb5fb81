import { completionBody, completionChunks } from "./scripted-openai-answer.js";
import { type ScriptedWireFormat, sseData } from "./scripted-wire-format.js";

export function requestBodyModel(body: unknown): string | null {
  const model = (body as { model?: unknown } | null)?.model;
  return typeof model === "string" ? model : null;
}

/** OpenAI Chat Completions (`POST /v1/chat/completions`), as OpenAI and every compatible server speak it. */
export const openAIChatWire: ScriptedWireFormat = {
  name: "openai-chat",
  basePath: "/v1",
  matches: (path) => path === "/v1/chat/completions",
  requestedModel: (request) => requestBodyModel(request.body),
  streams: (request) => (request.body as { stream?: unknown } | null)?.stream === true,
  answerBody: completionBody,
  answerFrames(answer, request) {
    const options = (request.body as { stream_options?: { include_usage?: unknown } } | null)?.stream_options;
    return completionChunks(answer, options?.include_usage === true).map(sseData);
  },
  streamEnd: "data: [DONE]\n\n",
  streamContentType: "text/event-stream",
  errorFrame: sseData,
  defaultErrorBody: (status) => ({
    error: { message: `scripted error with status ${status}`, type: "scripted_error", code: null },
  }),
};
