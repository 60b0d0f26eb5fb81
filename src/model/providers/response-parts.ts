import type { LanguageModelV4Usage, SharedV4ProviderMetadata, SharedV4Warning } from "@ai-sdk/provider";
import type { ProviderMetadata } from "../../contract/agent-message.js";
import type { ModelUsage, RawReasoningBlock } from "../model-client.js";

/** Provider metadata as plain JSON data (undefined members dropped), or undefined when it holds nothing. */
export function plainMetadata(metadata: SharedV4ProviderMetadata | undefined): ProviderMetadata | undefined {
  if (metadata === undefined) return undefined;
  let plain: Record<string, Record<string, unknown>> | undefined;
  for (const [provider, values] of Object.entries(metadata)) {
    if (values === undefined || values === null) continue;
    const copy = JSON.parse(JSON.stringify(values)) as Record<string, unknown>;
    if (Object.keys(copy).length === 0) continue;
    plain ??= {};
    plain[provider] = copy;
  }
  return plain;
}

/** Metadata of several parts of one kind merged, per provider, later parts winning. */
export function mergeMetadata(
  into: ProviderMetadata | undefined,
  metadata: ProviderMetadata | undefined,
): ProviderMetadata | undefined {
  if (metadata === undefined) return into;
  if (into === undefined) return metadata;
  const merged: Record<string, Readonly<Record<string, unknown>>> = { ...into };
  for (const [provider, values] of Object.entries(metadata))
    merged[provider] = { ...merged[provider], ...values };
  return merged;
}

/** The reasoning blocks worth keeping: only when some block carries metadata the provider needs back. */
export function keptReasoningBlocks(
  blocks: readonly RawReasoningBlock[],
): readonly RawReasoningBlock[] | undefined {
  return blocks.some((block) => block.providerMetadata !== undefined) ? blocks : undefined;
}

export function toModelUsage(usage: LanguageModelV4Usage | undefined): ModelUsage | null {
  if (usage === undefined) return null;
  const { inputTokens, outputTokens } = usage;
  if (inputTokens.total === undefined && outputTokens.total === undefined) return null;
  const converted: { -readonly [key in keyof ModelUsage]: ModelUsage[key] } = {
    inputTokens: inputTokens.total ?? 0,
    outputTokens: outputTokens.total ?? 0,
  };
  if (outputTokens.reasoning) converted.reasoningTokens = outputTokens.reasoning;
  if (inputTokens.cacheRead) converted.cacheReadTokens = inputTokens.cacheRead;
  if (inputTokens.cacheWrite) converted.cacheWriteTokens = inputTokens.cacheWrite;
  return converted;
}

export function describeWarnings(
  warnings: readonly SharedV4Warning[] | undefined,
): readonly string[] | undefined {
  if (warnings === undefined || warnings.length === 0) return undefined;
  return warnings.map((warning) => {
    switch (warning.type) {
      case "unsupported":
      case "compatibility":
        return `${warning.type}: ${warning.feature}${warning.details === undefined ? "" : ` (${warning.details})`}`;
      case "deprecated":
        return `deprecated: ${warning.setting} (${warning.message})`;
      default:
        return `other: ${warning.message}`;
    }
  });
}

/** The request body as sent: JSON text parsed, so the transcript stores data, not a string of it. */
export function requestBody(body: unknown): unknown {
  if (typeof body !== "string") return body ?? null;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}
