import { z } from "zod";
import { durationSchema } from "./mcp-server-configuration-schema.js";

/**
 * `server.auth.jwt`: tokens of an identity provider, verified against its key set (`jwksUrl`) or one public key
 * (`publicKey`, PEM), with the issuer and audience they must carry; `claims` names the claims that hold the
 * tenant, the user and the role (default `tenant`, `sub`, `role`).
 */
const jwtShape = {
  issuer: z.string().min(1),
  audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
  jwksUrl: z
    .string()
    .refine((value) => URL.canParse(value), { error: "expected an absolute URL" })
    .optional(),
  publicKey: z.string().min(1).optional(),
  /** The signing algorithms accepted (`RS256`, `ES256`, `EdDSA`...); default: whatever the key is for. */
  algorithms: z.array(z.string().min(1)).min(1).optional(),
  claims: z
    .object({
      tenant: z.string().min(1).optional(),
      user: z.string().min(1).optional(),
      role: z.string().min(1).optional(),
    })
    .strict()
    .optional(),
};

const jwtLayerSchema = z.object(jwtShape).partial().strict();

const perMinute = z.number().int().min(1);
const toolClassLimits = z
  .object({ read_only: perMinute, idempotent: perMinute, write: perMinute, delete: perMinute })
  .partial()
  .strict();

/**
 * `server.rateLimits`: requests per 60-second window. `perAddress` counts every authenticated route's requests
 * from one client address (default 120); `perTenant` and `perUser` a tenant's and a user's API requests (default
 * no limit); `toolCalls` the tool calls of a tenant's (`perTenant`) and a user's (`perUser`) runs, per tool class.
 */
const rateLimitsSchema = z
  .object({
    perAddress: perMinute.optional(),
    perTenant: perMinute.optional(),
    perUser: perMinute.optional(),
    toolCalls: z
      .object({ perTenant: toolClassLimits, perUser: toolClassLimits })
      .partial()
      .strict()
      .optional(),
  })
  .strict();

/**
 * `server.listenBacklog`: how many connections the system queues for the server before it accepts them (Node's
 * default 511). A burst of more simultaneous connections than this, while the process is busy, has the system
 * refuse the rest (the clients see their connection reset); the system caps it (`net.core.somaxconn` on Linux).
 */
const listenBacklogSchema = z.number().int().min(1).max(2_147_483_647);

/**
 * `server.workflows`: the folder whose `<name>.workflow.yaml` (`.yml`, `.json`) files `POST /v1/workflows/runs` may
 * start, by name; `server.repositories`: the git working trees `POST /v1/work-items/runs` may change, by name. A
 * client names them, never gives a path. Relative paths are relative to the directory the server runs in.
 */
const workflowsFolderSchema = z.string().min(1);
const repositoriesSchema = z.record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/), z.string().min(1));

/**
 * `server.toolCache`: server runs cache every read-only tool's results per tenant and role for `defaultTtl`
 * (default 90 s; per tool or MCP server, the configuration's `toolCache` wins); null caches only the tools that
 * `toolCache` names.
 */
const serverToolCacheSchema = z.object({ defaultTtl: durationSchema.nullable().optional() }).strict();

const budgetSchema = z.object({ limit: z.number().positive(), period: z.enum(["day", "month"]) }).strict();

/**
 * `server.budgets`: what each tenant's runs may consume per calendar period in UTC (`day` or `month`): `tokens`
 * (input and output tokens of every model call) and `costUsd` (their cost from `pricing`). A tenant's own
 * `budgets` (tenant configuration) wins, budget by budget. Default none.
 */
export const budgetsSchema = z
  .object({ tokens: budgetSchema.nullable().optional(), costUsd: budgetSchema.nullable().optional() })
  .strict();

const jwtSchema = z
  .object(jwtShape)
  .strict()
  .refine((jwt) => (jwt.jwksUrl === undefined) !== (jwt.publicKey === undefined), {
    error: "give exactly one of jwksUrl and publicKey",
    path: ["jwksUrl"],
  })
  .transform((jwt) => ({
    issuer: jwt.issuer,
    audience: jwt.audience,
    jwksUrl: jwt.jwksUrl ?? null,
    publicKey: jwt.publicKey ?? null,
    algorithms: jwt.algorithms ?? null,
    claims: {
      tenant: jwt.claims?.tenant ?? "tenant",
      user: jwt.claims?.user ?? "sub",
      role: jwt.claims?.role ?? "role",
    },
  }));

/**
 * The keys of `server`, with the JWT settings as a layer or the merged configuration has them: one list for both,
 * so that a key added for the merged configuration is never refused in a configuration file (or the reverse).
 */
function serverSchemaWith<Jwt extends z.ZodType>(jwt: Jwt) {
  return z
    .object({
      auth: z.object({ jwt: jwt.optional() }).strict().optional(),
      /** Read the client address from `X-Forwarded-For` (behind a reverse proxy you run). */
      trustProxy: z.boolean().optional(),
      rateLimits: rateLimitsSchema.optional(),
      listenBacklog: listenBacklogSchema.optional(),
      workflows: workflowsFolderSchema.optional(),
      repositories: repositoriesSchema.optional(),
      toolCache: serverToolCacheSchema.optional(),
      budgets: budgetsSchema.optional(),
    })
    .strict();
}

/** `server` in one configuration file: every key optional (a higher layer may set one). */
export const serverLayerSchema = serverSchemaWith(jwtLayerSchema);

/** `server` of the merged configuration: what `charter serve` reads (API keys need no configuration). */
export const serverSchema = serverSchemaWith(jwtSchema);

export type ServerConfiguration = z.output<typeof serverSchema>;
export type JwtConfiguration = z.output<typeof jwtSchema>;
export type RateLimitConfiguration = z.output<typeof rateLimitsSchema>;
export type BudgetsConfiguration = z.output<typeof budgetsSchema>;
