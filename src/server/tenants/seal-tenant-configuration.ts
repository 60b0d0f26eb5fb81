import { CharterError } from "../../foundation/charter-error.js";
import { isSealedSecret, providerKeyContext, sealSecret } from "./sealed-secret.js";
import type { TenantConfiguration, TenantProviderSettings } from "./tenant-configuration.js";
import { secretsKeyVariable } from "./tenant-secrets-key.js";

/**
 * The tenant's configuration as it is stored: every provider key sealed with the server's secrets key (one sealed
 * already is kept as it is). Without a secrets key, a document holding a provider key is refused with
 * TENANT_SECRETS_KEY_MISSING rather than stored in the clear.
 */
export function sealTenantConfiguration(
  configuration: TenantConfiguration,
  tenantId: string,
  secretsKey: Uint8Array | null,
): TenantConfiguration {
  const providers = configuration.providers;
  if (providers === undefined) return configuration;
  const sealed: Record<string, TenantProviderSettings> = {};
  for (const [name, settings] of Object.entries(providers)) {
    const apiKey = settings.apiKey;
    if (apiKey === undefined || isSealedSecret(apiKey)) {
      sealed[name] = settings;
      continue;
    }
    if (secretsKey === null) {
      throw new CharterError(
        "TENANT_SECRETS_KEY_MISSING",
        `this server has no secrets key to store provider ${name}'s API key with: set ${secretsKeyVariable} (32 random bytes in base64, e.g. \`openssl rand -base64 32\`) for every charter serve and charter worker on this store`,
        { details: { provider: name, field: `providers.${name}.apiKey`, variable: secretsKeyVariable } },
      );
    }
    sealed[name] = {
      ...settings,
      apiKey: sealSecret(apiKey, secretsKey, providerKeyContext(tenantId, name)),
    };
  }
  return { ...configuration, providers: sealed };
}
