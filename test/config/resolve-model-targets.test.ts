import { describe, expect, it } from "vitest";
import { configurationSchema } from "../../src/config/configuration-schema.js";
import { resolveModelTargets, selectModelReferences } from "../../src/config/resolve-model-targets.js";
import { CharterError } from "../../src/foundation/charter-error.js";

const configuration = configurationSchema.parse({
  providers: {
    local: {
      type: "openai-compatible",
      baseUrl: "http://127.0.0.1:9/v1",
      apiKey: "local-key",
      headers: { "X-Team": "t" },
      models: {
        "qwen3-coder": {
          contextWindow: 32768,
          contextWindowBufferTokens: 64,
          tokenizer: "cl100k_base",
          temperature: 0.7,
        },
        "meta/llama-3": {},
      },
    },
    openai: { type: "openai", models: { "gpt-4o-mini": { topP: null } } },
  },
});

function failure(models: string[]): CharterError {
  try {
    resolveModelTargets(models, configuration);
  } catch (error) {
    if (CharterError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected resolveModelTargets to throw");
}

describe("resolveModelTargets", () => {
  it("resolves targets in order with their per-model settings and connection", () => {
    const targets = resolveModelTargets(
      ["local/qwen3-coder", "openai/gpt-4o-mini", "local/meta/llama-3"],
      configuration,
    );
    expect(targets).toEqual([
      {
        provider: "local",
        model: "qwen3-coder",
        contextWindow: 32768,
        contextWindowBufferTokens: 64,
        tokenizer: "cl100k_base",
        parameters: { temperature: 0.7 },
        connection: {
          type: "openai-compatible",
          mode: "chat",
          baseUrl: "http://127.0.0.1:9/v1",
          apiKey: "local-key",
          headers: { "X-Team": "t" },
        },
      },
      {
        provider: "openai",
        model: "gpt-4o-mini",
        tokenizer: null,
        parameters: { topP: null },
        connection: {
          type: "openai",
          mode: "chat",
          baseUrl: "https://api.openai.com/v1",
          apiKey: null,
          headers: {},
        },
      },
      // Split at the first slash: the model name keeps its own.
      expect.objectContaining({ provider: "local", model: "meta/llama-3" }),
    ]);
  });

  it("applies settings set on the provider to each of its models, the model's own winning", () => {
    const withProviderSettings = configurationSchema.parse({
      providers: {
        claude: {
          type: "anthropic",
          apiKey: "k",
          temperature: null,
          reasoning: "medium",
          contextWindow: 200_000,
          tokenizer: "claude",
          models: { opus: { reasoning: "high" }, haiku: { temperature: 0.3, contextWindow: 100_000 } },
        },
      },
    });
    const [opus, haiku] = resolveModelTargets(["claude/opus", "claude/haiku"], withProviderSettings);
    expect(opus).toMatchObject({
      contextWindow: 200_000,
      tokenizer: "claude",
      parameters: { temperature: null, reasoning: "high" },
      connection: { type: "anthropic", baseUrl: "https://api.anthropic.com/v1", apiKey: "k" },
    });
    expect(haiku).toMatchObject({
      contextWindow: 100_000,
      parameters: { temperature: 0.3, reasoning: "medium" },
    });
  });

  it("names a target whose provider is not configured", () => {
    const error = failure(["local/qwen3-coder", "anthropic/claude"]);
    expect(error.code).toBe("CONFIGURATION_INVALID");
    expect(error.details).toEqual({ key: "models", target: "anthropic/claude", provider: "anthropic" });
  });

  it("names a target whose model is not configured", () => {
    expect(failure(["local/qwen2"]).details).toEqual({
      key: "models",
      target: "local/qwen2",
      provider: "local",
      model: "qwen2",
    });
  });

  it("refuses a malformed reference and an empty list", () => {
    expect(failure(["no-slash"]).details).toEqual({ key: "models", target: "no-slash" });
    expect(failure(["/model"]).details).toEqual({ key: "models", target: "/model" });
    expect(failure(["local/"]).details).toEqual({ key: "models", target: "local/" });
    expect(failure([]).details).toEqual({ key: "models" });
    // Inherited object properties are not providers.
    expect(failure(["constructor/x"]).details).toMatchObject({ provider: "constructor" });
  });
});

describe("selectModelReferences", () => {
  it("takes the whole list from the highest layer that sets one", () => {
    const cli = { models: ["a/1"] };
    const agent = { models: ["b/1", "b/2"] };
    const defaults = { models: ["c/1"] };
    expect(selectModelReferences(cli, agent, defaults)).toEqual(["a/1"]);
    expect(selectModelReferences({}, agent, defaults)).toEqual(["b/1", "b/2"]);
    expect(selectModelReferences({}, {}, defaults)).toEqual(["c/1"]);
    expect(selectModelReferences({}, {}, {})).toEqual([]);
  });
});
