import type { LanguageModelV4GenerateResult } from "@ai-sdk/provider";
import type { ProviderMetadata } from "../../contract/agent-message.js";
import type { ModelResponse, RawReasoningBlock, RawToolCall } from "../model-client.js";
import { type CallIdAssigner, containsString } from "./call-ids.js";
import {
  describeWarnings,
  keptReasoningBlocks,
  mergeMetadata,
  plainMetadata,
  requestBody,
  toModelUsage,
} from "./response-parts.js";

/** The ModelResponse of a `doGenerate` result: text, reasoning blocks and tool calls in order, with their provider data. */
export function generateResultToResponse(
  result: LanguageModelV4GenerateResult,
  callIds: CallIdAssigner,
): ModelResponse {
  let text = "";
  let textMetadata: ProviderMetadata | undefined;
  const reasoningBlocks: RawReasoningBlock[] = [];
  const toolCalls: RawToolCall[] = [];
  const rawResponse = result.response?.body ?? null;
  const responseId = result.response?.id ?? null;
  for (const part of result.content) {
    if (part.type === "text") {
      text += part.text;
      textMetadata = mergeMetadata(textMetadata, plainMetadata(part.providerMetadata));
    } else if (part.type === "reasoning") {
      const providerMetadata = plainMetadata(part.providerMetadata);
      reasoningBlocks.push(
        providerMetadata === undefined ? { text: part.text } : { text: part.text, providerMetadata },
      );
    } else if (part.type === "tool-call" && part.providerExecuted !== true) {
      const providerMetadata = plainMetadata(part.providerMetadata);
      toolCalls.push({
        id: callIds.assign(
          part.toolCallId,
          containsString(rawResponse, part.toolCallId),
          responseId,
          toolCalls.length,
        ),
        name: part.toolName,
        // Unparsed on purpose: the protocol adapter decides what the text means.
        argumentsText: part.input,
        ...(providerMetadata === undefined ? {} : { providerMetadata }),
      });
    }
  }
  const blocks = keptReasoningBlocks(reasoningBlocks);
  const warnings = describeWarnings(result.warnings);
  return {
    text,
    reasoning: reasoningBlocks.map((block) => block.text).join(""),
    toolCalls,
    usage: toModelUsage(result.usage),
    finishReason: result.finishReason.unified,
    responseId,
    // The body only: API keys travel in headers, which are never copied here.
    rawRequest: requestBody(result.request?.body),
    rawResponse,
    ...(blocks === undefined ? {} : { reasoningBlocks: blocks }),
    ...(textMetadata === undefined ? {} : { textProviderMetadata: textMetadata }),
    ...(warnings === undefined ? {} : { warnings }),
  };
}
