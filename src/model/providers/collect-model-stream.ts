import type {
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import type { ProviderMetadata } from "../../contract/agent-message.js";
import { ModelCallError } from "../model-call-error.js";
import type { ModelDelta, ModelResponse, RawToolCall } from "../model-client.js";
import { type CallIdAssigner, containsString } from "./call-ids.js";
import {
  describeWarnings,
  keptReasoningBlocks,
  mergeMetadata,
  plainMetadata,
  requestBody,
  toModelUsage,
} from "./response-parts.js";

/** A stream that broke off: why (still to be classified) and what had arrived before it did. */
export class StreamInterruption extends Error {
  readonly failure: unknown;
  readonly partialResponse: ModelResponse;

  constructor(failure: unknown, partialResponse: ModelResponse) {
    super("the model's stream broke off", { cause: failure });
    this.name = "StreamInterruption";
    this.failure = failure;
    this.partialResponse = partialResponse;
  }
}

interface ReasoningBlockState {
  text: string;
  metadata: ProviderMetadata | undefined;
}

export interface CollectStreamOptions {
  readonly callIds: CallIdAssigner;
  /** The provider's own test of a complete stream (see `ProviderAdapter.isStreamComplete`). */
  readonly isStreamComplete: ((rawChunks: readonly unknown[]) => boolean) | undefined;
  readonly onDelta: ((delta: ModelDelta) => void) | undefined;
  /** `provider/model`, named in messages. */
  readonly target: string;
}

/**
 * Reads a `doStream` result to its end and assembles the same ModelResponse `doGenerate` gives, calling
 * `onDelta` with each text and reasoning delta and once per tool call as they arrive. A stream that errors,
 * breaks off, or ends without the provider's finish rejects with a `StreamInterruption` carrying what had
 * arrived (the caller classifies it); an error thrown by `onDelta` is ignored, since showing the answer
 * must never fail the attempt.
 */
export async function collectModelStream(
  result: LanguageModelV4StreamResult,
  options: CollectStreamOptions,
): Promise<ModelResponse> {
  const { callIds, onDelta } = options;
  const chunks: unknown[] = [];
  const reasoning = new Map<string, ReasoningBlockState>();
  const toolCalls: RawToolCall[] = [];
  const announcedCalls = new Map<string, string>();
  let text = "";
  let textMetadata: ProviderMetadata | undefined;
  let responseId: string | null = null;
  let usage: LanguageModelV4Usage | undefined;
  let finishReason: string | null = null;
  let warnings: readonly string[] | undefined;

  const emit = (delta: ModelDelta): void => {
    if (onDelta === undefined) return;
    try {
      onDelta(delta);
    } catch {
      // A failing listener must not turn a good answer into a failed attempt.
    }
  };
  const reasoningBlock = (id: string): ReasoningBlockState => {
    let block = reasoning.get(id);
    if (block === undefined) {
      block = { text: "", metadata: undefined };
      reasoning.set(id, block);
    }
    return block;
  };
  const callId = (sdkId: string): string =>
    callIds.assign(sdkId, containsString(chunks, sdkId), responseId, announcedCalls.size);

  const response = (): ModelResponse => {
    const blocks = [...reasoning.values()].map((block) =>
      block.metadata === undefined
        ? { text: block.text }
        : { text: block.text, providerMetadata: block.metadata },
    );
    const kept = keptReasoningBlocks(blocks);
    return {
      text,
      reasoning: blocks.map((block) => block.text).join(""),
      toolCalls: [...toolCalls],
      usage: toModelUsage(usage),
      finishReason: finishReason ?? "interrupted",
      responseId,
      rawRequest: requestBody(result.request?.body),
      rawResponse: { stream: true, chunks: [...chunks] },
      ...(kept === undefined ? {} : { reasoningBlocks: kept }),
      ...(textMetadata === undefined ? {} : { textProviderMetadata: textMetadata }),
      ...(warnings === undefined ? {} : { warnings }),
    };
  };

  const handle = (part: LanguageModelV4StreamPart): void => {
    switch (part.type) {
      case "raw":
        chunks.push(part.rawValue);
        return;
      case "stream-start":
        warnings = describeWarnings(part.warnings);
        return;
      case "response-metadata":
        responseId = part.id ?? responseId;
        return;
      case "text-start":
      case "text-end":
        textMetadata = mergeMetadata(textMetadata, plainMetadata(part.providerMetadata));
        return;
      case "text-delta":
        textMetadata = mergeMetadata(textMetadata, plainMetadata(part.providerMetadata));
        text += part.delta;
        if (part.delta !== "") emit({ type: "text", text: part.delta });
        return;
      case "reasoning-start":
      case "reasoning-end": {
        const block = reasoningBlock(part.id);
        block.metadata = mergeMetadata(block.metadata, plainMetadata(part.providerMetadata));
        return;
      }
      case "reasoning-delta": {
        const block = reasoningBlock(part.id);
        block.metadata = mergeMetadata(block.metadata, plainMetadata(part.providerMetadata));
        block.text += part.delta;
        if (part.delta !== "") emit({ type: "reasoning", text: part.delta });
        return;
      }
      case "tool-input-start":
        if (part.providerExecuted === true || announcedCalls.has(part.id)) return;
        announcedCalls.set(part.id, callId(part.id));
        emit({ type: "tool_call", id: announcedCalls.get(part.id)!, name: part.toolName });
        return;
      case "tool-call": {
        if (part.providerExecuted === true) return;
        let id = announcedCalls.get(part.toolCallId);
        if (id === undefined) {
          id = callId(part.toolCallId);
          announcedCalls.set(part.toolCallId, id);
          emit({ type: "tool_call", id, name: part.toolName });
        }
        const providerMetadata = plainMetadata(part.providerMetadata);
        toolCalls.push({
          id,
          name: part.toolName,
          argumentsText: part.input,
          ...(providerMetadata === undefined ? {} : { providerMetadata }),
        });
        return;
      }
      case "finish":
        usage = part.usage;
        finishReason = part.finishReason.unified;
        return;
      case "error":
        throw new StreamInterruption(part.error, response());
      default:
        return;
    }
  };

  const reader = result.stream.getReader();
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (error) {
        throw new StreamInterruption(error, response());
      }
      if (next.done) break;
      handle(next.value);
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  } finally {
    reader.releaseLock();
  }
  if (chunks.length === 0) {
    // A 200 whose body held no event at all is not a stream that broke off: it was never one.
    throw new StreamInterruption(
      new ModelCallError(
        "invalid_response",
        `model call to ${options.target} answered a stream without events`,
      ),
      response(),
    );
  }
  if (
    finishReason === null ||
    finishReason === "interrupted" ||
    options.isStreamComplete?.(chunks) === false
  ) {
    throw new StreamInterruption(
      new ModelCallError(
        "network",
        `model call to ${options.target}: the stream ended before the answer did`,
      ),
      response(),
    );
  }
  return response();
}
