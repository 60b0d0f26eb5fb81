import { z } from "zod";
import { agentSettingsSchema, modelParameterShape } from "./agent-settings-schema.js";

/** The OpenAI API's address, used when a provider of type "openai" gives no `baseUrl`. */
export const openAiBaseUrl = "https://api.openai.com/v1";

const baseUrlSchema = z
  .string()
  .refine((value) => URL.canParse(value), { error: "expected an absolute URL" });

export const modelConfigurationSchema = z
  .object({
    contextWindow: z.number().int().positive().optional(),
    contextWindowBufferTokens: z.number().int().nonnegative().optional(),
    tokenizer: z.string().min(1).nullable().optional(),
    ...modelParameterShape,
  })
  .strict();

const providerShape = {
  // Both types talk to an OpenAI-compatible Chat Completions endpoint.
  type: z.enum(["openai-compatible", "openai"]),
  baseUrl: baseUrlSchema.optional(),
  apiKey: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  models: z.record(z.string().min(1), modelConfigurationSchema).optional(),
};

const mcpServerShape = {
  type: z.literal("stdio").optional(),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().min(1).optional(),
};

/**
 * One configuration file before merging. Every key is optional (a higher layer may override a single
 * field of a provider defined lower down), but unknown keys and ill-typed values are caught here, where
 * the file that holds them is still known.
 */
export const configurationLayerSchema = z
  .object({
    providers: z.record(z.string().min(1), z.object(providerShape).partial().strict()).optional(),
    mcpServers: z.record(z.string().min(1), z.object(mcpServerShape).partial().strict()).optional(),
    defaults: agentSettingsSchema.optional(),
  })
  .strict();

const providerSchema = z
  .object(providerShape)
  .strict()
  .refine((provider) => provider.type === "openai" || provider.baseUrl !== undefined, {
    error: 'a provider of type "openai-compatible" needs a baseUrl',
    path: ["baseUrl"],
  })
  .transform((provider) => ({
    type: provider.type,
    baseUrl: provider.baseUrl ?? openAiBaseUrl,
    apiKey: provider.apiKey ?? null,
    headers: provider.headers ?? {},
    models: provider.models ?? {},
  }));

const mcpServerSchema = z
  .object(mcpServerShape)
  .strict()
  .transform((server) => ({
    type: server.type ?? ("stdio" as const),
    command: server.command,
    args: server.args ?? [],
    env: server.env ?? {},
    cwd: server.cwd ?? null,
  }));

/** The merged configuration of every layer, complete and normalised. */
export const configurationSchema = z
  .object({
    providers: z.record(z.string().min(1), providerSchema).default({}),
    mcpServers: z.record(z.string().min(1), mcpServerSchema).default({}),
    defaults: agentSettingsSchema.default({}),
  })
  .strict();

export type Configuration = z.output<typeof configurationSchema>;
export type ProviderConfiguration = z.output<typeof providerSchema>;
export type ModelConfiguration = z.output<typeof modelConfigurationSchema>;
export type McpServerConfiguration = z.output<typeof mcpServerSchema>;
