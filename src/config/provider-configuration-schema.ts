import { z } from "zod";
import { modelParameterShape } from "./agent-settings-schema.js";

/** The provider types Charter speaks, each through its own AI SDK provider package. */
export const providerTypes = [
  "openai",
  "openai-compatible",
  "anthropic",
  "google",
  "ollama",
  "openrouter",
] as const;
export type ProviderType = (typeof providerTypes)[number];

/** The OpenAI API's address, used when a provider of type "openai" gives no `baseUrl`. */
export const openAiBaseUrl = "https://api.openai.com/v1";

/** Where each provider type is reached when its configuration gives no `baseUrl`. */
export const defaultBaseUrls: Readonly<Record<Exclude<ProviderType, "openai-compatible">, string>> = {
  openai: openAiBaseUrl,
  anthropic: "https://api.anthropic.com/v1",
  google: "https://generativelanguage.googleapis.com/v1beta",
  ollama: "http://127.0.0.1:11434/api",
  openrouter: "https://openrouter.ai/api/v1",
};

export const baseUrlSchema = z
  .string()
  .refine((value) => URL.canParse(value), { error: "expected an absolute URL" });

/** What may be set for a model: its context budget, its tokenizer and any request parameter. */
const modelSettingsShape = {
  contextWindow: z.number().int().positive().optional(),
  contextWindowBufferTokens: z.number().int().nonnegative().optional(),
  tokenizer: z.string().min(1).nullable().optional(),
  ...modelParameterShape,
};

export const modelConfigurationSchema = z.object(modelSettingsShape).strict();

export const providerShape = {
  type: z.enum(providerTypes),
  /** For type "openai": the Chat Completions API (`chat`, the default) or the Responses API. */
  mode: z.enum(["chat", "responses"]).optional(),
  baseUrl: baseUrlSchema.optional(),
  apiKey: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  models: z.record(z.string().min(1), modelConfigurationSchema).optional(),
  // Set on the provider, a model setting applies to every model of it unless the model sets it too.
  ...modelSettingsShape,
};

export const providerSchema = z
  .object(providerShape)
  .strict()
  .refine((provider) => provider.type !== "openai-compatible" || provider.baseUrl !== undefined, {
    error: 'a provider of type "openai-compatible" needs a baseUrl',
    path: ["baseUrl"],
  })
  .refine((provider) => provider.mode === undefined || provider.type === "openai", {
    error: 'only a provider of type "openai" has a mode ("chat" or "responses")',
    path: ["mode"],
  })
  .transform((provider) => {
    const { type, mode, baseUrl, apiKey, headers, models, ...modelDefaults } = provider;
    return {
      type,
      mode: mode ?? "chat",
      baseUrl: baseUrl ?? (type === "openai-compatible" ? "" : defaultBaseUrls[type]),
      apiKey: apiKey ?? null,
      headers: headers ?? {},
      models: models ?? {},
      /** The model settings set on the provider itself. */
      modelDefaults,
    };
  });

export type ProviderConfiguration = z.output<typeof providerSchema>;
export type ModelConfiguration = z.output<typeof modelConfigurationSchema>;
