import type { FastifyPluginAsync } from "fastify";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { RunStore } from "../../store/run-store.js";
import { sealTenantConfiguration } from "../tenants/seal-tenant-configuration.js";
import {
  mergeTenantConfiguration,
  type TenantConfiguration,
  tenantConfigurationSchema,
  tenantConfigurationVersion,
  tenantConfigurationView,
} from "../tenants/tenant-configuration.js";
import { authenticatedErrors, errorReference } from "./error-schema.js";
import { identityOf } from "./request-identity.js";

export interface TenantConfigurationRoutesOptions {
  readonly store: RunStore;
  readonly environment: RuntimeEnvironment;
  /** Seals the provider keys tenants store (`loadTenantSecretsKey`); null: provider keys are refused. */
  readonly secretsKey: Uint8Array | null;
}

const answerSchema = {
  type: "object",
  required: ["tenantId", "configuration", "updatedAt"],
  properties: {
    tenantId: { type: "string" },
    configuration: { $ref: "TenantConfiguration#" },
    updatedAt: { type: ["string", "null"], format: "date-time" },
  },
} as const;

/**
 * `/v1/tenant/config`: an admin reads and replaces its own tenant's configuration (allowed agents, model targets,
 * provider keys and base URLs). Provider keys are stored and never answered: they read as their redaction marker.
 */
export const tenantConfigurationRoutes: FastifyPluginAsync<TenantConfigurationRoutesOptions> = async (
  app,
  { store, environment, secretsKey },
) => {
  app.addSchema(tenantConfigurationSchema);

  app.get(
    "/v1/tenant/config",
    {
      config: { permission: "tenant.configure" },
      schema: {
        summary: "The caller's tenant's configuration (provider keys redacted)",
        tags: ["tenant"],
        response: { 200: answerSchema, ...authenticatedErrors },
      },
    },
    async (request) => {
      const { tenantId } = identityOf(request);
      const stored = await store.forTenant(tenantId).getTenantConfiguration();
      return {
        tenantId,
        configuration: tenantConfigurationView(documentOf(stored?.configuration)),
        updatedAt: stored === null ? null : new Date(stored.updatedAt).toISOString(),
      };
    },
  );

  app.put<{ Body: TenantConfiguration }>(
    "/v1/tenant/config",
    {
      config: { permission: "tenant.configure" },
      schema: {
        summary: "Replace the caller's tenant's configuration",
        description:
          "A provider apiKey sent as its redaction marker (as GET shows it) keeps the key stored before; a provider without apiKey has none of its own. Keys are stored sealed with the server's secrets key (422 TENANT_SECRETS_KEY_MISSING when the server has none).",
        tags: ["tenant"],
        body: { $ref: "TenantConfiguration#" },
        response: { 200: answerSchema, ...authenticatedErrors, 422: errorReference },
      },
    },
    async (request) => {
      const { tenantId } = identityOf(request);
      const tenantStore = store.forTenant(tenantId);
      const before = await tenantStore.getTenantConfiguration();
      const merged = mergeTenantConfiguration(
        request.body,
        before === null ? null : documentOf(before.configuration),
      );
      const now = environment.now();
      const sealed = sealTenantConfiguration(merged, tenantId, secretsKey);
      await tenantStore.putTenantConfiguration({ v: tenantConfigurationVersion, ...sealed }, now);
      return {
        tenantId,
        configuration: tenantConfigurationView(merged),
        updatedAt: new Date(now).toISOString(),
      };
    },
  );
};

/** The stored document without its version field (absent: an empty configuration). */
function documentOf(stored: unknown): TenantConfiguration {
  if (stored === null || typeof stored !== "object") return {};
  const { v: _version, ...document } = stored as TenantConfiguration & { v?: number };
  return document;
}
