import {
  type ScriptedEmptyStep,
  type ScriptedReasoningOnlyStep,
  type ScriptedTextStep,
  type ScriptedToolCallsStep,
  scriptedArgumentsText,
  scriptedCallId,
} from "./scripted-openai-step.js";

export type ScriptedAnswerStep =
  | ScriptedTextStep
  | ScriptedToolCallsStep
  | ScriptedEmptyStep
  | ScriptedReasoningOnlyStep;

/** A scripted step resolved into exactly what the server answers, before choosing JSON or SSE. */
export interface ScriptedAnswer {
  /** 1-based position of the answer in the script, for ids in the other wire formats. */
  readonly answerNumber: number;
  readonly id: string;
  readonly model: string;
  readonly text: string;
  readonly reasoning: string;
  readonly reasoningSignature: string | null;
  readonly calls: readonly {
    readonly id: string;
    /** False when the id was made up from the position: formats whose calls may lack ids then send none. */
    readonly idGiven: boolean;
    readonly name: string;
    readonly argumentsText: string;
  }[];
  readonly finishReason: string;
  readonly usage: Readonly<Record<string, unknown>>;
  readonly chunkSize: number;
}

// A fixed creation time keeps every answer byte-for-byte deterministic (2026-01-01T00:00:00Z).
export const createdSeconds = 1_767_225_600;
const defaultChunkSize = 8;

export function isAnswerStep(step: { readonly kind: string }): step is ScriptedAnswerStep {
  return (
    step.kind === "text" ||
    step.kind === "tool_calls" ||
    step.kind === "empty" ||
    step.kind === "reasoning_only"
  );
}

export function resolveScriptedAnswer(
  step: ScriptedAnswerStep,
  facts: { readonly answerNumber: number; readonly model: string; readonly requestBodyLength: number },
): ScriptedAnswer {
  const text = step.kind === "text" || step.kind === "tool_calls" ? (step.text ?? "") : "";
  const reasoning =
    step.kind === "text" || step.kind === "tool_calls" || step.kind === "reasoning_only"
      ? (step.reasoning ?? "")
      : "";
  const calls =
    step.kind === "tool_calls"
      ? step.calls.map((call, index) => ({
          id: scriptedCallId(call, facts.answerNumber, index),
          idGiven: call.id !== undefined,
          name: call.name,
          argumentsText: scriptedArgumentsText(call),
        }))
      : [];
  let generatedLength = text.length + reasoning.length;
  for (const call of calls) generatedLength += call.name.length + call.argumentsText.length;
  const promptTokens = Math.max(1, Math.ceil(facts.requestBodyLength / 4));
  const completionTokens = Math.max(1, Math.ceil(generatedLength / 4));
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    ...step.usage,
  };
  if (step.usage?.total_tokens === undefined)
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
  return {
    answerNumber: facts.answerNumber,
    id: `chatcmpl-${facts.answerNumber}`,
    model: facts.model,
    text,
    reasoning,
    reasoningSignature:
      step.kind === "text" || step.kind === "tool_calls" || step.kind === "reasoning_only"
        ? (step.reasoningSignature ?? null)
        : null,
    calls,
    finishReason: step.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop"),
    usage,
    chunkSize: Math.max(1, step.stream?.chunkSize ?? defaultChunkSize),
  };
}

/** The `chat.completion` JSON body. */
export function completionBody(answer: ScriptedAnswer): Record<string, unknown> {
  const message: Record<string, unknown> = { role: "assistant", content: answer.text };
  if (answer.reasoning !== "") message.reasoning_content = answer.reasoning;
  if (answer.calls.length > 0) {
    message.tool_calls = answer.calls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.argumentsText },
    }));
  }
  return {
    id: answer.id,
    object: "chat.completion",
    created: createdSeconds,
    model: answer.model,
    choices: [{ index: 0, message, finish_reason: answer.finishReason }],
    usage: answer.usage,
  };
}

/** `text` cut into pieces of at most `size` characters (none for the empty text). */
export function pieces(text: string, size: number): string[] {
  const result: string[] = [];
  for (let start = 0; start < text.length; start += size) result.push(text.slice(start, start + size));
  return result;
}

/**
 * The `chat.completion.chunk` payloads of a streamed answer, in order: role, reasoning deltas, content
 * deltas, each tool call's header followed by its argument text cut across several chunks, the finish
 * reason, and (when the request asked for it) a usage chunk. `[DONE]` is added by the server.
 */
export function completionChunks(answer: ScriptedAnswer, includeUsage: boolean): Record<string, unknown>[] {
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    id: answer.id,
    object: "chat.completion.chunk",
    created: createdSeconds,
    model: answer.model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  const chunks: Record<string, unknown>[] = [chunk({ role: "assistant", content: "" })];
  for (const piece of pieces(answer.reasoning, answer.chunkSize))
    chunks.push(chunk({ reasoning_content: piece }));
  for (const piece of pieces(answer.text, answer.chunkSize)) chunks.push(chunk({ content: piece }));
  answer.calls.forEach((call, index) => {
    chunks.push(
      chunk({
        tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }],
      }),
    );
    for (const piece of pieces(call.argumentsText, answer.chunkSize)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  chunks.push(chunk({}, answer.finishReason));
  if (includeUsage) {
    chunks.push({
      id: answer.id,
      object: "chat.completion.chunk",
      created: createdSeconds,
      model: answer.model,
      choices: [],
      usage: answer.usage,
    });
  }
  return chunks;
}

export function scriptedErrorBody(
  status: number,
  body: Readonly<Record<string, unknown>> | undefined,
): unknown {
  return (
    body ?? { error: { message: `scripted error with status ${status}`, type: "scripted_error", code: null } }
  );
}
