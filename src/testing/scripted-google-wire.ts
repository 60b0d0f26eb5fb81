import { pieces, type ScriptedAnswer } from "./scripted-openai-answer.js";
import { argumentsObject, type ScriptedWireFormat, sseData, usageCounts } from "./scripted-wire-format.js";

const pathPattern = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

const finishReasons: Readonly<Record<string, string>> = {
  stop: "STOP",
  tool_calls: "STOP",
  length: "MAX_TOKENS",
  content_filter: "SAFETY",
};

function usageMetadata(answer: ScriptedAnswer): Record<string, number> {
  const counts = usageCounts(answer);
  const metadata: Record<string, number> = {
    promptTokenCount: counts.prompt,
    // Gemini counts thoughts apart from the candidates.
    candidatesTokenCount: Math.max(0, counts.completion - counts.reasoning),
    totalTokenCount: counts.prompt + counts.completion,
  };
  if (counts.reasoning > 0) metadata.thoughtsTokenCount = counts.reasoning;
  if (counts.cachedRead > 0) metadata.cachedContentTokenCount = counts.cachedRead;
  return metadata;
}

function functionCallParts(answer: ScriptedAnswer): Record<string, unknown>[] {
  return answer.calls.map((call, index) => ({
    functionCall: {
      ...(call.idGiven ? { id: call.id } : {}),
      name: call.name,
      args: argumentsObject(call.argumentsText),
    },
    // Gemini signs its thinking on the first function call of a turn.
    ...(index === 0 && answer.reasoningSignature !== null
      ? { thoughtSignature: answer.reasoningSignature }
      : {}),
  }));
}

function candidate(parts: Record<string, unknown>[], finishReason: string | null): Record<string, unknown> {
  return {
    content: { role: "model", parts },
    ...(finishReason === null ? {} : { finishReason }),
    index: 0,
  };
}

/**
 * Gemini's Generative Language API (`POST /v1beta/models/<model>:generateContent`, and
 * `:streamGenerateContent?alt=sse` streaming whole GenerateContentResponse objects): thoughts are text
 * parts with `thought: true`, calls are `functionCall` parts (ids only when the script gives them; Gemini
 * often sends none), the thought signature rides on the first call or else on the text; errors are
 * `{ error: { code, message, status, details } }`.
 */
export const googleWire: ScriptedWireFormat = {
  name: "google",
  basePath: "/v1beta",
  matches: (path) => pathPattern.test(path),
  requestedModel: (request) => pathPattern.exec(request.path)?.[1] ?? null,
  streams: (request) => pathPattern.exec(request.path)?.[2] === "streamGenerateContent",
  answerBody(answer) {
    const parts: Record<string, unknown>[] = [];
    const textSignature =
      answer.calls.length === 0 && answer.reasoningSignature !== null
        ? { thoughtSignature: answer.reasoningSignature }
        : {};
    if (answer.reasoning !== "") parts.push({ text: answer.reasoning, thought: true });
    if (answer.text !== "") parts.push({ text: answer.text, ...textSignature });
    parts.push(...functionCallParts(answer));
    return {
      candidates: [candidate(parts, finishReasons[answer.finishReason] ?? "OTHER")],
      usageMetadata: usageMetadata(answer),
      modelVersion: answer.model,
      responseId: `scripted-${answer.answerNumber}`,
    };
  },
  answerFrames(answer) {
    const chunk = (parts: Record<string, unknown>[], last: boolean) =>
      sseData({
        candidates: [candidate(parts, last ? (finishReasons[answer.finishReason] ?? "OTHER") : null)],
        ...(last ? { usageMetadata: usageMetadata(answer) } : {}),
        modelVersion: answer.model,
        responseId: `scripted-${answer.answerNumber}`,
      });
    const frames: string[] = [];
    for (const piece of pieces(answer.reasoning, answer.chunkSize))
      frames.push(chunk([{ text: piece, thought: true }], false));
    const textPieces = pieces(answer.text, answer.chunkSize);
    textPieces.forEach((piece, index) => {
      const signed =
        index === textPieces.length - 1 && answer.calls.length === 0 && answer.reasoningSignature !== null;
      frames.push(
        chunk([{ text: piece, ...(signed ? { thoughtSignature: answer.reasoningSignature } : {}) }], false),
      );
    });
    frames.push(chunk(functionCallParts(answer), true));
    return frames;
  },
  streamEnd: "",
  streamContentType: "text/event-stream",
  errorFrame: sseData,
  defaultErrorBody: (status) => ({
    error: { code: status, message: `scripted error with status ${status}`, status: "INTERNAL" },
  }),
};
