import { CharterError } from "../foundation/charter-error.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import { classifyHttpFailure } from "../model/classify-model-error.js";
import { ModelCallError } from "../model/model-call-error.js";
import type {
  ModelClient,
  ModelRequest,
  ModelResponse,
  ModelUsage,
  RawToolCall,
} from "../model/model-client.js";
import { isAnswerStep, type ScriptedAnswerStep, scriptedErrorBody } from "./scripted-openai-answer.js";
import { type ScriptedStep, scriptedArgumentsText, scriptedCallId } from "./scripted-openai-step.js";

export interface StrictScriptedModelOptions {
  readonly provider?: string;
  readonly model?: string;
  /** The steps, consumed in order; exactly one of `script` and `respond`. */
  readonly script?: readonly ScriptedStep[];
  /** A dynamic script: the step that answers the request with this 0-based index. */
  readonly respond?: (request: ModelRequest, index: number) => ScriptedStep | Promise<ScriptedStep>;
  /** Clock for Retry-After dates and the sleep used by `delay` steps; defaults to the system one. */
  readonly environment?: RuntimeEnvironment;
  /** Keep every request in `requests` (default true); benchmarks turn it off so memory stays flat. */
  readonly recordRequests?: boolean;
}

export interface StrictScriptedModel extends ModelClient {
  /** Every request received, in order, as the very objects passed in (never copied). */
  readonly requests: ModelRequest[];
  remaining(): number;
  /** Throws a CharterError (INTERNAL_ERROR) when steps remain unconsumed. */
  assertConsumed(): void;
}

interface PreparedAnswer {
  readonly text: string;
  readonly reasoning: string;
  readonly finishReason: string;
  readonly outputTokens: number;
  readonly calls: readonly {
    readonly id: string | undefined;
    readonly name: string;
    readonly argumentsText: string;
  }[];
}

// The unified finish reasons the AI SDK reports, so scripted and HTTP runs record the same values.
const unifiedFinishReasons: Readonly<Record<string, string>> = {
  stop: "stop",
  length: "length",
  content_filter: "content-filter",
  tool_calls: "tool-calls",
  function_call: "tool-calls",
};

function prepareAnswer(step: ScriptedAnswerStep): PreparedAnswer {
  const text = step.kind === "text" || step.kind === "tool_calls" ? (step.text ?? "") : "";
  const reasoning =
    step.kind === "text" || step.kind === "tool_calls" || step.kind === "reasoning_only"
      ? (step.reasoning ?? "")
      : "";
  const calls =
    step.kind === "tool_calls"
      ? step.calls.map((call) => ({
          id: call.id,
          name: call.name,
          argumentsText: scriptedArgumentsText(call),
        }))
      : [];
  let generatedLength = text.length + reasoning.length;
  for (const call of calls) generatedLength += call.name.length + call.argumentsText.length;
  const rawFinishReason = step.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop");
  return {
    text,
    reasoning,
    calls,
    finishReason: unifiedFinishReasons[rawFinishReason] ?? "other",
    outputTokens: Math.max(1, Math.ceil(generatedLength / 4)),
  };
}

/**
 * An in-process `ModelClient` (no HTTP) driven by the scripted server's step union, strict like the
 * fake model of openai-agents: a call after the script is exhausted rejects with a CharterError naming
 * the call, and `assertConsumed()` fails when steps were left over. Error steps reject with exactly the
 * `ModelCallError` the HTTP client's classification gives for the same status, body and headers.
 * Built for the per-turn benchmark: steps are prepared once, requests are recorded by reference.
 */
export function createStrictScriptedModel(options: StrictScriptedModelOptions): StrictScriptedModel {
  const provider = options.provider ?? "scripted";
  const model = options.model ?? "strict-scripted-model";
  const target = `${provider}/${model}`;
  const script = options.script ?? [];
  const environment = options.environment ?? systemEnvironment;
  const requests: ModelRequest[] = [];
  let callCount = 0;
  const prepared = new WeakMap<ScriptedAnswerStep, PreparedAnswer>();

  function usageFor(request: ModelRequest, step: ScriptedAnswerStep, answer: PreparedAnswer): ModelUsage {
    let inputTokens = step.usage?.prompt_tokens;
    if (inputTokens === undefined) {
      let characters = 0;
      for (const message of request.messages) characters += message.content.length;
      inputTokens = Math.max(1, Math.ceil(characters / 4));
    }
    return { inputTokens, outputTokens: step.usage?.completion_tokens ?? answer.outputTokens };
  }

  function answerWith(step: ScriptedAnswerStep, request: ModelRequest, answerNumber: number): ModelResponse {
    let answer = prepared.get(step);
    if (answer === undefined) {
      answer = prepareAnswer(step);
      prepared.set(step, answer);
    }
    const toolCalls: RawToolCall[] = answer.calls.map((call, index) => ({
      id: scriptedCallId(call, answerNumber, index),
      name: call.name,
      argumentsText: call.argumentsText,
    }));
    return {
      text: answer.text,
      reasoning: answer.reasoning,
      toolCalls,
      usage: usageFor(request, step, answer),
      finishReason: answer.finishReason,
      responseId: `chatcmpl-${answerNumber}`,
      rawRequest: null,
      rawResponse: step,
    };
  }

  async function play(
    step: ScriptedStep,
    request: ModelRequest,
    answerNumber: number,
  ): Promise<ModelResponse> {
    if (request.abortSignal?.aborted) {
      throw new ModelCallError("aborted", `model call to ${target} was aborted by the caller`);
    }
    switch (step.kind) {
      case "delay":
        await environment.sleep(step.ms, request.abortSignal);
        return play(step.then, request, answerNumber);
      case "disconnect":
        throw new ModelCallError(
          "network",
          `model call to ${target} lost its connection (scripted disconnect)`,
        );
      case "error":
        throw classifyHttpFailure({
          statusCode: step.status,
          headers: step.headers,
          body: scriptedErrorBody(step.status, step.body),
          now: environment.now(),
          target,
        });
      case "raw":
        throw classifyHttpFailure({
          statusCode: step.status ?? 200,
          body: step.body,
          now: environment.now(),
          target,
        });
      default:
        if (!isAnswerStep(step)) {
          throw new CharterError(
            "INTERNAL_ERROR",
            `unknown scripted step kind ${(step as { kind: string }).kind}`,
            {
              details: { kind: (step as { kind: string }).kind, callIndex: answerNumber - 1 },
            },
          );
        }
        return answerWith(step, request, answerNumber);
    }
  }

  return {
    provider,
    model,
    requests,
    remaining: () => (options.respond === undefined ? Math.max(0, script.length - callCount) : 0),
    assertConsumed() {
      if (options.respond !== undefined || callCount >= script.length) return;
      throw new CharterError(
        "INTERNAL_ERROR",
        `strict scripted model: ${script.length - callCount} of ${script.length} steps were never requested`,
        { details: { consumed: callCount, scriptLength: script.length } },
      );
    },
    async generate(request) {
      const index = callCount++;
      if (options.recordRequests !== false) requests.push(request);
      let step: ScriptedStep | undefined;
      if (options.respond !== undefined) {
        step = await options.respond(request, index);
      } else {
        step = script[index];
        if (step === undefined) {
          throw new CharterError(
            "INTERNAL_ERROR",
            `strict scripted model: unexpected call ${index + 1}, the script has only ${script.length} steps`,
            { details: { callIndex: index, scriptLength: script.length } },
          );
        }
      }
      return play(step, request, index + 1);
    },
  };
}
