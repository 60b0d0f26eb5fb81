import type { LanguageModelV4CallOptions, LanguageModelV4FunctionTool } from "@ai-sdk/provider";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import { ModelCallError } from "../model-call-error.js";
import type { ModelClient, ModelRequest, ModelResponse, ModelToolSpec } from "../model-client.js";
import { CallIdAssigner } from "./call-ids.js";
import { classifyAiSdkError } from "./classify-ai-sdk-error.js";
import { collectModelStream, StreamInterruption } from "./collect-model-stream.js";
import { generateResultToResponse } from "./generate-result-to-response.js";
import type { ProviderAdapter } from "./provider-adapter.js";
import { type ResponseSizeWatch, withResponseSizeLimit } from "./response-size-limit.js";
import { toLanguageModelPrompt } from "./to-language-model-prompt.js";

export interface LanguageModelClientOptions {
  /** The provider's name in configuration, as in `provider/model`. */
  readonly provider: string;
  readonly model: string;
  /** The provider adapter, loaded (with its provider package) on the first call and reused after. */
  readonly loadAdapter: () => Promise<ProviderAdapter>;
  /** The clock used for Retry-After dates and reset times. */
  readonly environment: RuntimeEnvironment;
  /** Client-side timeout of one call, streaming included. */
  readonly timeoutMs: number;
}

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

function toCallOptions(
  request: ModelRequest,
  adapter: ProviderAdapter,
  abortSignal: AbortSignal,
): LanguageModelV4CallOptions {
  const options: LanguageModelV4CallOptions = {
    prompt: toLanguageModelPrompt(
      request.messages,
      adapter.toolResultMedia === undefined || request.attachmentData === undefined
        ? undefined
        : { media: adapter.toolResultMedia, attachmentData: request.attachmentData },
    ),
    abortSignal,
    ...adapter.toCallOptions(request.parameters),
  };
  if (request.tools.length > 0) {
    options.tools = toFunctionTools(request.tools);
    options.toolChoice = { type: request.toolChoice };
  }
  // Raw chunks are what the transcript keeps of a streamed answer.
  if (request.stream === true) options.includeRawChunks = true;
  return options;
}

/**
 * A `ModelClient` over one AI SDK LanguageModelV4. It calls `doGenerate` (or, with `stream`, `doStream`)
 * directly, once per `generate`: the SDK's own retry loop lives in `generateText`, which is not used, so
 * Charter's session alone decides retries and target rotation. Every failure is classified once, with the
 * provider's own reading of its error format; a stream that breaks off keeps what had arrived in
 * `partialResponse`.
 */
export function createLanguageModelClient(options: LanguageModelClientOptions): ModelClient {
  const { loadAdapter, environment, timeoutMs } = options;
  const target = `${options.provider}/${options.model}`;
  const callIds = new CallIdAssigner(options.provider);

  return {
    provider: options.provider,
    model: options.model,
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const adapter = await loadAdapter();
      const callerSignal = request.abortSignal;
      const controller = new AbortController();
      let timedOut = false;
      const onCallerAbort = () => controller.abort(callerSignal?.reason);
      if (callerSignal?.aborted) controller.abort(callerSignal.reason);
      else callerSignal?.addEventListener("abort", onCallerAbort, { once: true });
      const callTimeoutMs = request.timeoutMs ?? timeoutMs;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort(
          new DOMException(`model call to ${target} timed out after ${callTimeoutMs} ms`, "TimeoutError"),
        );
      }, callTimeoutMs);
      timer.unref?.();
      const sizeWatch: ResponseSizeWatch = {
        maxBytes: request.maxResponseBytes ?? Number.POSITIVE_INFINITY,
        receivedBytes: 0,
        exceeded: false,
      };
      try {
        const callOptions = toCallOptions(request, adapter, controller.signal);
        return await withResponseSizeLimit(sizeWatch, async () => {
          if (request.stream === true) {
            const streamed = await adapter.languageModel.doStream(callOptions);
            return await collectModelStream(streamed, {
              callIds,
              onDelta: request.onDelta,
              target,
              isStreamComplete: adapter.isStreamComplete,
            });
          }
          return generateResultToResponse(await adapter.languageModel.doGenerate(callOptions), callIds);
        });
      } catch (error) {
        if (sizeWatch.exceeded && !controller.signal.aborted) {
          // Too large is decided here, from the watch, whatever error the provider package wrapped it in.
          throw new ModelCallError(
            "invalid_response",
            `the response of ${target} is larger than modelResponseMaxBytes (${sizeWatch.maxBytes} bytes)`,
            {
              code: "MODEL_RESPONSE_TOO_LARGE",
              cause: error,
              ...(error instanceof StreamInterruption ? { partialResponse: error.partialResponse } : {}),
            },
          );
        }
        const interruption = error instanceof StreamInterruption ? error : null;
        const classified = classifyAiSdkError(interruption?.failure ?? error, {
          now: environment.now(),
          target,
          abortedByCaller: callerSignal?.aborted === true,
          timedOut: timedOut && callerSignal?.aborted !== true,
          ...(adapter.readFailure === undefined ? {} : { readProviderFailure: adapter.readFailure }),
        });
        if (interruption === null) throw classified;
        throw new ModelCallError(classified.errorClass, classified.message, {
          statusCode: classified.statusCode,
          retryAfterMs: classified.retryAfterMs,
          rawResponse: classified.rawResponse,
          partialResponse: interruption.partialResponse,
          cause: classified.cause ?? interruption.failure,
          details: classified.details,
        });
      } finally {
        clearTimeout(timer);
        callerSignal?.removeEventListener("abort", onCallerAbort);
      }
    },
  };
}
