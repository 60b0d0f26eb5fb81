import type { Configuration } from "../../config/configuration-schema.js";
import { CharterError } from "../../foundation/charter-error.js";
import type { RunStore } from "../../store/run-store.js";
import { isSealedSecret, openSealedSecret, providerKeyContext } from "./sealed-secret.js";
import type { TenantConfiguration } from "./tenant-configuration.js";

/** Where a provider's API key came from: the layer is recorded on the run, the key never. */
export type ProviderKeySource = "tenant" | "server" | "environment";

export interface TenantProviderResolution {
  readonly apiKey: string | null;
  /** null when no layer has a key for the provider. */
  readonly apiKeySource: ProviderKeySource | null;
  /** The tenant's base URL for the provider, else the server configuration's, else null. */
  readonly baseUrl: string | null;
}

/** What a run of a tenant runs with, resolved tenant first, then the server configuration, then the environment. */
export interface TenantSettings {
  readonly tenantId: string;
  /** The agent ids the tenant may run; null: every agent. */
  readonly allowedAgents: readonly string[] | null;
  /** The tenant's model targets (`provider/model`), used instead of the agent's; null: the agent's. */
  readonly models: readonly string[] | null;
  /** Every provider of the server configuration or the tenant's, by name. */
  readonly providers: Readonly<Record<string, TenantProviderResolution>>;
  /** Every key resolved, with a label naming where it came from: register each with the run's secret redactor. */
  readonly secrets: readonly { readonly value: string; readonly label: string }[];
}

/** The environment variable holding a provider's key when neither the tenant nor the configuration gives one. */
export function providerKeyVariable(provider: string): string {
  return `CHARTER_PROVIDER_${provider.toUpperCase().replaceAll(/[^A-Z0-9]/g, "_")}_API_KEY`;
}

/**
 * The settings a run of `tenantId` runs with: the tenant's configuration from the store
 * (`store.forTenant(tenantId)`), then the server's configuration (`providers.<name>.apiKey`, `baseUrl`), then the
 * environment (`CHARTER_PROVIDER_<NAME>_API_KEY`). The execution side calls this for each run it starts; the HTTP
 * API calls it to refuse an agent the tenant may not run.
 */
export async function resolveTenantSettings(options: {
  readonly store: RunStore;
  readonly tenantId: string;
  readonly configuration: Pick<Configuration, "providers">;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  /** The server's secrets key, which opens the tenant's stored provider keys (`loadTenantSecretsKey`). */
  readonly secretsKey?: Uint8Array | null;
}): Promise<TenantSettings> {
  const stored = await options.store.forTenant(options.tenantId).getTenantConfiguration();
  const tenant = (stored?.configuration ?? {}) as TenantConfiguration;
  const variables = options.processEnvironment ?? process.env;
  const names = new Set([
    ...Object.keys(options.configuration.providers),
    ...Object.keys(tenant.providers ?? {}),
  ]);
  const providers: Record<string, TenantProviderResolution> = {};
  const secrets: { value: string; label: string }[] = [];
  for (const name of [...names].sort()) {
    const own = tenant.providers?.[name];
    const server = options.configuration.providers[name];
    const fromEnvironment = variables[providerKeyVariable(name)];
    let apiKey: string | null = null;
    let apiKeySource: ProviderKeySource | null = null;
    if (own?.apiKey !== undefined)
      [apiKey, apiKeySource] = [
        openProviderKey(own.apiKey, options.tenantId, name, options.secretsKey),
        "tenant",
      ];
    else if (server?.apiKey != null) [apiKey, apiKeySource] = [server.apiKey, "server"];
    else if (fromEnvironment !== undefined && fromEnvironment !== "")
      [apiKey, apiKeySource] = [fromEnvironment, "environment"];
    if (apiKey !== null) secrets.push({ value: apiKey, label: `${apiKeySource}.providers.${name}.apiKey` });
    providers[name] = {
      apiKey,
      apiKeySource,
      baseUrl:
        own?.baseUrl ?? (server?.baseUrl !== undefined && server.baseUrl !== "" ? server.baseUrl : null),
    };
  }
  return {
    tenantId: options.tenantId,
    allowedAgents: tenant.allowedAgents ?? null,
    models: tenant.models ?? null,
    providers,
    secrets,
  };
}

/**
 * The execution side's `TenantConfigurationResolver`: a tenant's settings as a configuration layer above the
 * server's own, for each run and each continuation of one. It holds, for the providers the server configuration
 * defines, the key when the tenant or the environment supplied it (a key from the server configuration is there
 * already) and the tenant's base URL; and the tenant's `models` as `defaults.models` (the agents that name no
 * models of their own run on them). Null when the tenant changes nothing.
 */
export function createTenantConfigurationResolver(options: {
  readonly store: RunStore;
  readonly configuration: Pick<Configuration, "providers">;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  readonly secretsKey?: Uint8Array | null;
}): (tenantId: string) => Promise<{ readonly label: string; readonly data: Record<string, unknown> } | null> {
  return async (tenantId) => {
    const settings = await resolveTenantSettings({ ...options, tenantId });
    const tenant = (await options.store.forTenant(tenantId).getTenantConfiguration())?.configuration as
      | TenantConfiguration
      | undefined;
    const providers: Record<string, Record<string, string>> = {};
    for (const name of Object.keys(options.configuration.providers)) {
      const resolved = settings.providers[name];
      const entry: Record<string, string> = {};
      if (resolved?.apiKey != null && resolved.apiKeySource !== "server") entry.apiKey = resolved.apiKey;
      const baseUrl = tenant?.providers?.[name]?.baseUrl;
      if (baseUrl !== undefined) entry.baseUrl = baseUrl;
      if (Object.keys(entry).length > 0) providers[name] = entry;
    }
    const data: Record<string, unknown> = {};
    if (Object.keys(providers).length > 0) data.providers = providers;
    if (settings.models !== null) data.defaults = { models: [...settings.models] };
    return Object.keys(data).length === 0 ? null : { label: `tenant ${tenantId} (run store)`, data };
  };
}

/**
 * For each provider, which layer supplies the key a run of the tenant uses (`tenant`, `server`, `environment`, or
 * null when none does): recorded on the run's ROUTED event so that an operator can tell whose key paid for a run.
 * The key itself is never part of it.
 */
export function createProviderKeySourceResolver(options: {
  readonly store: RunStore;
  readonly configuration: Pick<Configuration, "providers">;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  readonly secretsKey?: Uint8Array | null;
}): (tenantId: string) => Promise<Readonly<Record<string, ProviderKeySource | null>>> {
  return async (tenantId) => {
    const settings = await resolveTenantSettings({ ...options, tenantId });
    const sources: Record<string, ProviderKeySource | null> = {};
    for (const [name, resolved] of Object.entries(settings.providers)) sources[name] = resolved.apiKeySource;
    return sources;
  };
}

/**
 * A tenant's stored provider key in the clear: a sealed one opened with the server's secrets key (a key stored in
 * the clear by an earlier version is used as it is, and sealed when the tenant's configuration is next written).
 */
function openProviderKey(
  stored: string,
  tenantId: string,
  provider: string,
  secretsKey: Uint8Array | null | undefined,
): string {
  if (!isSealedSecret(stored)) return stored;
  const opened =
    secretsKey == null ? null : openSealedSecret(stored, secretsKey, providerKeyContext(tenantId, provider));
  if (opened !== null) return opened;
  throw new CharterError(
    "TENANT_SECRET_UNREADABLE",
    `tenant ${tenantId}'s API key for provider ${provider} does not open with this process's secrets key: give every process on this store the CHARTER_SECRETS_KEY the key was stored with, or have the tenant's admin store the key again`,
    { details: { tenantId, provider, secretsKey: secretsKey == null ? "none" : "another" } },
  );
}
