import { describe, expect, it } from "vitest";
import { parseAgentFile } from "../../src/config/agent-file.js";
import {
  findModelPricing,
  pricingLayerSchema,
  pricingSchema,
} from "../../src/config/pricing-configuration-schema.js";
import { defaultBaseUrls, providerSchema } from "../../src/config/provider-configuration-schema.js";

describe("providers.<name>", () => {
  it.each([
    ["openai", "https://api.openai.com/v1"],
    ["anthropic", "https://api.anthropic.com/v1"],
    ["google", "https://generativelanguage.googleapis.com/v1beta"],
    ["ollama", "http://127.0.0.1:11434/api"],
    ["openrouter", "https://openrouter.ai/api/v1"],
  ] as const)("type %s defaults its baseUrl to %s", (type, baseUrl) => {
    const provider = providerSchema.parse({ type });
    expect(provider.baseUrl).toBe(baseUrl);
    expect(defaultBaseUrls[type]).toBe(baseUrl);
    expect(provider).toMatchObject({ apiKey: null, headers: {}, models: {}, modelDefaults: {} });
  });

  it("needs a baseUrl for openai-compatible and keeps one given for any type", () => {
    expect(providerSchema.safeParse({ type: "openai-compatible" }).success).toBe(false);
    expect(providerSchema.parse({ type: "ollama", baseUrl: "http://gpu:11434/api" }).baseUrl).toBe(
      "http://gpu:11434/api",
    );
  });

  it("takes mode chat or responses for openai only, chat by default", () => {
    expect(providerSchema.parse({ type: "openai" }).mode).toBe("chat");
    expect(providerSchema.parse({ type: "openai", mode: "responses" }).mode).toBe("responses");
    const refused = providerSchema.safeParse({ type: "anthropic", mode: "responses" });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.path).toEqual(["mode"]);
    expect(providerSchema.safeParse({ type: "openai", mode: "completions" }).success).toBe(false);
  });

  it("keeps model settings set on the provider apart from its connection", () => {
    const provider = providerSchema.parse({
      type: "google",
      apiKey: "k",
      temperature: null,
      reasoningTokens: 2048,
      contextWindowBufferTokens: 512,
      models: { "gemini-2.5-flash": { reasoning: "low" } },
    });
    expect(provider.modelDefaults).toEqual({
      temperature: null,
      reasoningTokens: 2048,
      contextWindowBufferTokens: 512,
    });
    expect(provider.models["gemini-2.5-flash"]).toEqual({ reasoning: "low" });
  });

  it("refuses unknown types, unknown keys and bad reasoning values", () => {
    expect(providerSchema.safeParse({ type: "bedrock" }).success).toBe(false);
    expect(providerSchema.safeParse({ type: "openai", temprature: 1 }).success).toBe(false);
    expect(providerSchema.safeParse({ type: "openai", reasoning: "extreme" }).success).toBe(false);
    expect(providerSchema.safeParse({ type: "openai", reasoningTokens: 0 }).success).toBe(false);
  });
});

describe("agent keys stream, reasoning and reasoningTokens", () => {
  it("are read from the frontmatter, null meaning do not send", () => {
    const agent = parseAgentFile(
      "---\nstream: true\nreasoning: high\nreasoningTokens: null\n---\nprompt",
      "/agents/thinker.md",
    );
    expect(agent.settings).toMatchObject({ stream: true, reasoning: "high", reasoningTokens: null });
  });
});

describe("pricing", () => {
  const pricing = pricingSchema.parse({
    anthropic: { "claude-sonnet": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
    openai: { "gpt-4o-mini": { input: 0.15, output: 0.6 } },
  });

  it("finds the price of provider/model, and nothing for an unpriced one", () => {
    expect(findModelPricing(pricing, "openai", "gpt-4o-mini")).toEqual({ input: 0.15, output: 0.6 });
    expect(findModelPricing(pricing, "openai", "gpt-5")).toBeUndefined();
    expect(findModelPricing(pricing, "constructor", "x")).toBeUndefined();
    expect(findModelPricing(undefined, "openai", "gpt-4o-mini")).toBeUndefined();
  });

  it("needs input and output once merged, and accepts a single price in a layer", () => {
    expect(pricingSchema.safeParse({ openai: { m: { input: 1 } } }).success).toBe(false);
    expect(pricingSchema.safeParse({ openai: { m: { input: 1, output: -1 } } }).success).toBe(false);
    expect(pricingLayerSchema.safeParse({ openai: { m: { output: 2 } } }).success).toBe(true);
    expect(pricingLayerSchema.safeParse({ openai: { m: { outputs: 2 } } }).success).toBe(false);
  });
});
