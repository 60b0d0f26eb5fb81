import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4FunctionTool,
  LanguageModelV4GenerateResult,
} from "@ai-sdk/provider";
import type { FetchFunction } from "@ai-sdk/provider-utils";
import { type RuntimeEnvironment, systemEnvironment } from "../../foundation/environment.js";
import type {
  ModelClient,
  ModelRequest,
  ModelResponse,
  ModelToolSpec,
  ModelUsage,
  RawToolCall,
} from "../model-client.js";
import { classifyAiSdkError } from "./classify-ai-sdk-error.js";
import { toLanguageModelPrompt } from "./to-language-model-prompt.js";

export interface OpenAICompatibleModelClientOptions {
  /** The provider's name in configuration, as in `provider/model`. */
  readonly providerName: string;
  /** For example `http://127.0.0.1:8000/v1`. */
  readonly baseUrl: string;
  readonly apiKey?: string;
  readonly model: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly fetch?: FetchFunction;
  /** Client-side timeout of one call; defaults to five minutes. */
  readonly timeoutMs?: number;
  /** The clock used for Retry-After dates; defaults to the system environment. */
  readonly environment?: RuntimeEnvironment;
}

const defaultTimeoutMs = 300_000;

// Tool lists are usually the same frozen array every turn: convert each once.
const convertedTools = new WeakMap<readonly ModelToolSpec[], LanguageModelV4FunctionTool[]>();

function toFunctionTools(tools: readonly ModelToolSpec[]): LanguageModelV4FunctionTool[] {
  let converted = convertedTools.get(tools);
  if (converted === undefined) {
    converted = tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema as LanguageModelV4FunctionTool["inputSchema"],
    }));
    convertedTools.set(tools, converted);
  }
  return converted;
}

/**
 * Maps the contract's request parameters onto the call options: each is sent exactly when it is not
 * null and left out when it is null, so the provider's own default applies (seed 000 §10, "config
 * ignored"). The SDK does not send `top_k` on this provider, so it travels as a provider option, which
 * the SDK copies into the request body as is.
 */
function toCallOptions(
  request: ModelRequest,
  providerOptionsKey: string,
  abortSignal: AbortSignal,
): LanguageModelV4CallOptions {
  const parameters = request.parameters;
  const options: LanguageModelV4CallOptions = {
    prompt: toLanguageModelPrompt(request.messages),
    abortSignal,
  };
  if (request.tools.length > 0) {
    options.tools = toFunctionTools(request.tools);
    options.toolChoice = { type: request.toolChoice };
  }
  if (parameters.temperature !== null) options.temperature = parameters.temperature;
  if (parameters.top_p !== null) options.topP = parameters.top_p;
  if (parameters.max_output_tokens !== null) options.maxOutputTokens = parameters.max_output_tokens;
  if (parameters.frequency_penalty !== null) options.frequencyPenalty = parameters.frequency_penalty;
  if (parameters.presence_penalty !== null) options.presencePenalty = parameters.presence_penalty;
  if (parameters.seed !== null) options.seed = parameters.seed;
  if (parameters.stop_sequences !== null) options.stopSequences = [...parameters.stop_sequences];
  if (parameters.top_k !== null)
    options.providerOptions = { [providerOptionsKey]: { top_k: parameters.top_k } };
  return options;
}

function toUsage(result: LanguageModelV4GenerateResult): ModelUsage | null {
  const { inputTokens, outputTokens } = result.usage;
  if (inputTokens.total === undefined && outputTokens.total === undefined) return null;
  const usage: { -readonly [key in keyof ModelUsage]: ModelUsage[key] } = {
    inputTokens: inputTokens.total ?? 0,
    outputTokens: outputTokens.total ?? 0,
  };
  if (outputTokens.reasoning) usage.reasoningTokens = outputTokens.reasoning;
  if (inputTokens.cacheRead) usage.cacheReadTokens = inputTokens.cacheRead;
  return usage;
}

/** The ids the provider itself sent, so that calls without one get a deterministic id instead of a random one. */
function providerCallIds(rawResponse: unknown): readonly unknown[] {
  const choices = (rawResponse as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices)) return [];
  const calls = (choices[0] as { message?: { tool_calls?: unknown } } | undefined)?.message?.tool_calls;
  return Array.isArray(calls) ? calls.map((call) => (call as { id?: unknown } | null)?.id) : [];
}

function toModelResponse(result: LanguageModelV4GenerateResult): ModelResponse {
  let text = "";
  let reasoning = "";
  const toolCalls: RawToolCall[] = [];
  const rawResponse = result.response?.body ?? null;
  const responseId = result.response?.id ?? null;
  const sentIds = providerCallIds(rawResponse);
  for (const part of result.content) {
    if (part.type === "text") text += part.text;
    else if (part.type === "reasoning") reasoning += part.text;
    else if (part.type === "tool-call") {
      const index = toolCalls.length;
      const sentId = sentIds[index];
      toolCalls.push({
        id:
          typeof sentId === "string" && sentId !== "" ? sentId : `${responseId ?? "response"}_call_${index}`,
        name: part.toolName,
        // Unparsed on purpose: the protocol adapter decides what the text means.
        argumentsText: typeof part.input === "string" ? part.input : "",
      });
    }
  }
  const requestBody = result.request?.body;
  return {
    text,
    reasoning,
    toolCalls,
    usage: toUsage(result),
    finishReason: result.finishReason.unified,
    responseId,
    // The body only: the API key travels in the Authorization header, which is never copied here.
    rawRequest: typeof requestBody === "string" ? JSON.parse(requestBody) : (requestBody ?? null),
    rawResponse,
  };
}

/**
 * A `ModelClient` over the AI SDK's OpenAI-compatible provider. It calls the LanguageModelV4
 * `doGenerate` directly, once per `generate`: the SDK's own retry loop lives in `generateText`, which
 * is not used, so Charter's session alone decides retries and target rotation.
 */
export function createOpenAICompatibleModelClient(options: OpenAICompatibleModelClientOptions): ModelClient {
  const provider = createOpenAICompatible({
    name: options.providerName,
    baseURL: options.baseUrl,
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
    ...(options.headers === undefined ? {} : { headers: { ...options.headers } }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  const languageModel: LanguageModelV4 = provider.chatModel(options.model);
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
  const environment = options.environment ?? systemEnvironment;
  const target = `${options.providerName}/${options.model}`;
  // The SDK reads provider options under the part of the provider name before the first dot.
  const providerOptionsKey = options.providerName.split(".")[0]!.trim();

  return {
    provider: options.providerName,
    model: options.model,
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const callerSignal = request.abortSignal;
      const controller = new AbortController();
      let timedOut = false;
      const onCallerAbort = () => controller.abort(callerSignal?.reason);
      if (callerSignal?.aborted) controller.abort(callerSignal.reason);
      else callerSignal?.addEventListener("abort", onCallerAbort, { once: true });
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort(
          new DOMException(`model call to ${target} timed out after ${timeoutMs} ms`, "TimeoutError"),
        );
      }, timeoutMs);
      timer.unref?.();
      try {
        const result = await languageModel.doGenerate(
          toCallOptions(request, providerOptionsKey, controller.signal),
        );
        return toModelResponse(result);
      } catch (error) {
        throw classifyAiSdkError(error, {
          now: environment.now(),
          target,
          abortedByCaller: callerSignal?.aborted === true,
          timedOut: timedOut && callerSignal?.aborted !== true,
        });
      } finally {
        clearTimeout(timer);
        callerSignal?.removeEventListener("abort", onCallerAbort);
      }
    },
  };
}
