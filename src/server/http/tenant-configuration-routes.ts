import type { FastifyPluginAsync } from "fastify";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { RunStore } from "../../store/run-store.js";
import {
  mergeTenantConfiguration,
  type TenantConfiguration,
  tenantConfigurationSchema,
  tenantConfigurationVersion,
  tenantConfigurationView,
} from "../tenants/tenant-configuration.js";
import { authenticatedErrors } from "./error-schema.js";
import { identityOf } from "./request-identity.js";

export interface TenantConfigurationRoutesOptions {
  readonly store: RunStore;
  readonly environment: RuntimeEnvironment;
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
  { store, environment },
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
          "A provider apiKey sent as its redaction marker (as GET shows it) keeps the key stored before; a provider without apiKey has none of its own.",
        tags: ["tenant"],
        body: { $ref: "TenantConfiguration#" },
        response: { 200: answerSchema, ...authenticatedErrors },
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
      await tenantStore.putTenantConfiguration({ v: tenantConfigurationVersion, ...merged }, now);
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
