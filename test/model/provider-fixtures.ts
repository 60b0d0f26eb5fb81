import { systemMessage, userMessage } from "../../src/contract/agent-message.js";
import type { RequestParameters } from "../../src/contract/execution-contract.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import type { ModelClient, ModelRequest } from "../../src/model/model-client.js";
import { createModelClient } from "../../src/model/providers/create-model-client.js";
import type { ModelConnection } from "../../src/model/providers/model-connection.js";
import type { ScriptedProviderServer } from "../../src/testing/scripted-provider-server.js";
import type { ScriptedWireFormatName } from "../../src/testing/scripted-wire-format.js";

export const nullParameters: RequestParameters = {
  temperature: null,
  top_p: null,
  top_k: null,
  max_output_tokens: null,
  frequency_penalty: null,
  presence_penalty: null,
  seed: null,
  stop_sequences: null,
  reasoning: null,
  reasoning_tokens: null,
};

export const clockStart = Date.UTC(2026, 0, 1);

/** One way of reaching a provider: its configuration type (and mode) and the wire format it speaks. */
export interface ProviderCase {
  readonly label: string;
  readonly type: ModelConnection["type"];
  readonly mode?: "chat" | "responses";
  readonly wire: ScriptedWireFormatName;
  /** A model name the provider package has no special knowledge of, so it sends what it is given. */
  readonly model: string;
  /** A model its package knows to reason, where the package sends reasoning options only for those. */
  readonly reasoningModel?: string;
}

export const providerCases: readonly ProviderCase[] = [
  { label: "openai (chat)", type: "openai", wire: "openai-chat", model: "test-model" },
  {
    label: "openai (responses)",
    type: "openai",
    mode: "responses",
    wire: "openai-responses",
    model: "test-model",
    reasoningModel: "o4-mini",
  },
  { label: "openai-compatible", type: "openai-compatible", wire: "openai-chat", model: "test-model" },
  // The Anthropic package treats an unknown "claude-*" name as a current model, which takes no sampling parameters.
  { label: "anthropic", type: "anthropic", wire: "anthropic", model: "test-model" },
  { label: "google", type: "google", wire: "google", model: "gemini-test" },
  { label: "ollama", type: "ollama", wire: "ollama", model: "qwen-test" },
  { label: "openrouter", type: "openrouter", wire: "openrouter", model: "vendor/test-model" },
];

export function clientFor(
  providerCase: ProviderCase,
  server: ScriptedProviderServer,
  options: { timeoutMs?: number; apiKey?: string | null } = {},
): ModelClient {
  return createModelClient(
    {
      provider: "scripted",
      model: providerCase.model,
      connection: {
        type: providerCase.type,
        ...(providerCase.mode === undefined ? {} : { mode: providerCase.mode }),
        baseUrl: server.baseUrls[providerCase.wire],
        apiKey: options.apiKey === undefined ? "sk-test-key" : options.apiKey,
        headers: {},
      },
    },
    {
      environment: deterministicEnvironment({ start: clockStart }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    },
  );
}

export function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    messages: [systemMessage("You are terse."), userMessage("Hi")],
    tools: [],
    toolChoice: "auto",
    parameters: nullParameters,
    ...overrides,
  };
}

export const readFileTool = {
  name: "read_file",
  description: "Reads a file",
  inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

/** Where each provider's wire format carries the temperature and the output limit. */
export const temperatureAndLimitPaths: Readonly<
  Record<string, { readonly temperature: readonly string[]; readonly maxOutputTokens: readonly string[] }>
> = {
  "openai (chat)": { temperature: ["temperature"], maxOutputTokens: ["max_tokens"] },
  "openai (responses)": { temperature: ["temperature"], maxOutputTokens: ["max_output_tokens"] },
  "openai-compatible": { temperature: ["temperature"], maxOutputTokens: ["max_tokens"] },
  anthropic: { temperature: ["temperature"], maxOutputTokens: ["max_tokens"] },
  google: {
    temperature: ["generationConfig", "temperature"],
    maxOutputTokens: ["generationConfig", "maxOutputTokens"],
  },
  ollama: { temperature: ["options", "temperature"], maxOutputTokens: ["options", "num_predict"] },
  openrouter: { temperature: ["temperature"], maxOutputTokens: ["max_tokens"] },
};

export function valueAt(body: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], body);
}
