/**
 * One tenant's configuration, kept in the run store and changed by its admins (`PUT /v1/tenant/config`):
 *
 * - `allowedAgents`: the registry ids the tenant may run (absent or null: every agent of the server);
 * - `models`: the model targets (`provider/model`) its runs use instead of the agent's and the server's;
 * - `providers.<name>`: per provider, the tenant's own `apiKey` and `baseUrl` (the provider itself, its type and
 *   models, are the server configuration's);
 * - `budgets`: the tenant's token and cost budgets (`{ limit, period: "day" | "month" }`), each instead of the
 *   server's `server.budgets` one (null: none, whatever the server's).
 *
 * Version 1 of the stored document (`v`).
 */
export interface TenantConfiguration {
  readonly allowedAgents?: readonly string[] | null;
  readonly models?: readonly string[] | null;
  readonly providers?: Readonly<Record<string, TenantProviderSettings>>;
  readonly budgets?: TenantBudgets;
}

export interface TenantBudget {
  readonly limit: number;
  readonly period: "day" | "month";
}

export interface TenantBudgets {
  readonly tokens?: TenantBudget | null;
  readonly costUsd?: TenantBudget | null;
}

const budgetJsonSchema = {
  type: ["object", "null"],
  additionalProperties: false,
  required: ["limit", "period"],
  properties: {
    limit: { type: "number", exclusiveMinimum: 0 },
    period: { type: "string", enum: ["day", "month"], description: "A calendar day or month in UTC." },
  },
} as const;

export interface TenantProviderSettings {
  readonly apiKey?: string;
  readonly baseUrl?: string;
}

export const tenantConfigurationVersion = 1;

/** How a stored provider key is shown: never the key. `PUT` with this text keeps the stored key. */
export function redactedProviderKey(provider: string): string {
  return `[REDACTED:tenant.providers.${provider}.apiKey]`;
}

/** The JSON schema of the document (request body of `PUT /v1/tenant/config`, answer of `GET`). */
export const tenantConfigurationSchema = {
  $id: "TenantConfiguration",
  type: "object",
  additionalProperties: false,
  properties: {
    allowedAgents: {
      type: ["array", "null"],
      description: "The agent ids the tenant may run; null or absent: every agent.",
      items: { type: "string", pattern: "^[a-z0-9]+(?:-[a-z0-9]+)*$" },
      uniqueItems: true,
    },
    models: {
      type: ["array", "null"],
      description: "Model targets (provider/model) used instead of the agent's; null or absent: the agent's.",
      items: { type: "string", pattern: "^[^/\\s]+/\\S+$" },
      minItems: 1,
    },
    budgets: {
      type: "object",
      description:
        "What the tenant's runs may consume per UTC day or month, each budget instead of the server's (null: none).",
      additionalProperties: false,
      properties: { tokens: budgetJsonSchema, costUsd: budgetJsonSchema },
    },
    providers: {
      type: "object",
      description: "Per provider of the server configuration: the tenant's own API key and base URL.",
      additionalProperties: {
        type: "object",
        additionalProperties: false,
        properties: {
          apiKey: { type: "string", minLength: 1, description: "Stored, never shown: answered redacted." },
          baseUrl: { type: "string", format: "uri" },
        },
      },
    },
  },
} as const;

/** The document as it is shown: every provider key replaced by its redaction marker. */
export function tenantConfigurationView(configuration: TenantConfiguration): TenantConfiguration {
  const providers = configuration.providers;
  if (providers === undefined) return configuration;
  return {
    ...configuration,
    providers: Object.fromEntries(
      Object.entries(providers).map(([name, settings]) => [
        name,
        settings.apiKey === undefined ? settings : { ...settings, apiKey: redactedProviderKey(name) },
      ]),
    ),
  };
}

/**
 * The document to store from one an admin sent: a provider key given as its redaction marker (what `GET` shows)
 * keeps the key stored before, so that reading, editing and writing back the document never loses or overwrites it.
 */
export function mergeTenantConfiguration(
  sent: TenantConfiguration,
  stored: TenantConfiguration | null,
): TenantConfiguration {
  const providers = sent.providers;
  if (providers === undefined) return sent;
  return {
    ...sent,
    providers: Object.fromEntries(
      Object.entries(providers).map(([name, settings]) => {
        if (settings.apiKey !== redactedProviderKey(name)) return [name, settings];
        const { apiKey: _marker, ...rest } = settings;
        const storedKey = stored?.providers?.[name]?.apiKey;
        return [name, storedKey === undefined ? rest : { ...rest, apiKey: storedKey }];
      }),
    ),
  };
}
