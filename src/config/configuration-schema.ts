import { z } from "zod";
import { agentSettingsSchema } from "./agent-settings-schema.js";
import { durationSchema, mcpServerSchema, mcpServerShape } from "./mcp-server-configuration-schema.js";
import { pricingLayerSchema, pricingSchema } from "./pricing-configuration-schema.js";
import { providerSchema, providerShape } from "./provider-configuration-schema.js";
import { queueReferenceIssues, queueSchema, queueShape } from "./queue-configuration-schema.js";
import { restToolNameSchema, restToolSchema, restToolShape } from "./rest-tool-configuration-schema.js";
import { serverLayerSchema, serverSchema } from "./server-configuration-schema.js";

export type { McpServerConfiguration } from "./mcp-server-configuration-schema.js";
export {
  baseUrlSchema,
  type ModelConfiguration,
  modelConfigurationSchema,
  openAiBaseUrl,
  type ProviderConfiguration,
} from "./provider-configuration-schema.js";

/**
 * Where runs are stored: `url` (`postgres://...`, or `sqlite:<path>`) or `path` (a SQLite file). Without
 * either, `CHARTER_DATABASE_URL`, then `~/.charter/charter.db`.
 */
const storeConfigurationSchema = z
  .object({ url: z.string().min(1).optional(), path: z.string().min(1).optional() })
  .strict();

/**
 * Read-only tool results cached across runs, with a TTL: keys are an MCP server name (all its read-only tools)
 * or `<server>__<tool>` (one tool, which wins); values are durations ("90s", "5m", or milliseconds).
 */
const toolCacheSchema = z.record(z.string().min(1), durationSchema);

/**
 * The folder of ability files (Markdown, frontmatter `id` and `keywords`, the body the knowledge). A relative path
 * is relative to the configuration file that sets it (resolved when the file is loaded).
 */
const abilitiesDirectorySchema = z.string().min(1);

/**
 * `agentsDir`: a folder of agent files, or a list of them. Each layer's relative paths are made absolute against
 * that layer's file when it is loaded, so the merged value holds absolute paths; `null` (unset) means `./agents`
 * in the working directory, when that folder exists.
 */
const agentsDirectorySchema = z
  .union([z.string().min(1), z.array(z.string().min(1))], {
    error: "expected a folder path or a list of folder paths",
  })
  .transform((value) => (typeof value === "string" ? [value] : value));

/**
 * One configuration file before merging. Every key is optional (a higher layer may override a single
 * field of a provider defined lower down), but unknown keys and ill-typed values are caught here, where
 * the file that holds them is still known. Each section's schema lives in its own file.
 */
export const configurationLayerSchema = z
  .object({
    providers: z.record(z.string().min(1), z.object(providerShape).partial().strict()).optional(),
    mcpServers: z.record(z.string().min(1), z.object(mcpServerShape).partial().strict()).optional(),
    restTools: z.record(restToolNameSchema, z.object(restToolShape).partial().strict()).optional(),
    queues: z.record(z.string().min(1), z.object(queueShape).partial().strict()).optional(),
    pricing: pricingLayerSchema.optional(),
    store: storeConfigurationSchema.optional(),
    toolCache: toolCacheSchema.optional(),
    abilitiesDir: abilitiesDirectorySchema.optional(),
    defaults: agentSettingsSchema.optional(),
    agentsDir: agentsDirectorySchema.nullable().optional(),
    server: serverLayerSchema.optional(),
  })
  .strict();

/** The merged configuration of every layer, complete and normalised. */
export const configurationSchema = z
  .object({
    providers: z.record(z.string().min(1), providerSchema).default({}),
    mcpServers: z.record(z.string().min(1), mcpServerSchema).default({}),
    restTools: z.record(restToolNameSchema, restToolSchema).default({}),
    queues: z.record(z.string().min(1), queueSchema).default({}),
    pricing: pricingSchema.default({}),
    store: storeConfigurationSchema.default({}),
    toolCache: toolCacheSchema.default({}),
    /** Unset in every file, it stays relative: the runner reads it from the working directory. */
    abilitiesDir: abilitiesDirectorySchema.default("./abilities"),
    defaults: agentSettingsSchema.default({}),
    agentsDir: agentsDirectorySchema.nullable().default(null),
    /** `charter serve`: JWT verification, the client address behind a proxy. */
    server: serverSchema.default({}),
  })
  .strict()
  .superRefine((configuration, context) => {
    // A typo in a queue name must not silently leave a tool unbounded.
    for (const issue of queueReferenceIssues(configuration)) {
      context.addIssue({ code: "custom", message: issue.message, path: [...issue.path] });
    }
  });

export type Configuration = z.output<typeof configurationSchema>;
