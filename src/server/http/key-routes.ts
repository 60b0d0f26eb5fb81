import type { FastifyPluginAsync } from "fastify";
import { CharterError } from "../../foundation/charter-error.js";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { RunStore } from "../../store/run-store.js";
import { apiKeyView, createApiKey } from "../identity/create-api-key.js";
import { serverRoles } from "../identity/server-permissions.js";
import type { TenantScopeViolations } from "../identity/tenant-scope-violations.js";
import { authenticatedErrors, errorReference } from "./error-schema.js";
import { refuseOutsideTenant } from "./refuse-outside-tenant.js";
import { identityOf } from "./request-identity.js";

export interface KeyRoutesOptions {
  readonly store: RunStore;
  readonly environment: RuntimeEnvironment;
  readonly violations: TenantScopeViolations;
}

const keySchema = {
  type: "object",
  required: ["keyId", "tenantId", "userId", "role", "name", "createdAt", "revokedAt"],
  properties: {
    keyId: { type: "string" },
    tenantId: { type: "string" },
    userId: { type: ["string", "null"] },
    role: { type: "string", enum: [...serverRoles] },
    name: { type: ["string", "null"] },
    createdAt: { type: "string", format: "date-time" },
    revokedAt: { type: ["string", "null"], format: "date-time" },
  },
} as const;

/** `/v1/keys`: an admin makes, lists and revokes its own tenant's API keys. */
export const keyRoutes: FastifyPluginAsync<KeyRoutesOptions> = async (
  app,
  { store, environment, violations },
) => {
  app.post<{ Body: { role: string; userId?: string; name?: string } }>(
    "/v1/keys",
    {
      config: { permission: "keys.manage" },
      schema: {
        summary: "Make an API key for the caller's tenant (the key is in this answer only)",
        tags: ["keys"],
        body: {
          type: "object",
          additionalProperties: false,
          required: ["role"],
          properties: {
            role: { type: "string", enum: [...serverRoles] },
            userId: { type: "string", minLength: 1 },
            name: { type: "string", minLength: 1 },
          },
        },
        response: {
          201: {
            type: "object",
            required: ["key", "apiKey"],
            properties: { key: { type: "string" }, apiKey: keySchema },
          },
          ...authenticatedErrors,
        },
      },
    },
    async (request, reply) => {
      const identity = identityOf(request);
      const { key, record } = await createApiKey(store.forTenant(identity.tenantId), {
        role: request.body.role,
        userId: request.body.userId ?? null,
        name: request.body.name ?? null,
        now: environment.now(),
      });
      return reply.status(201).send({ key, apiKey: apiKeyView(record) });
    },
  );

  app.get(
    "/v1/keys",
    {
      config: { permission: "keys.manage" },
      schema: {
        summary: "The caller's tenant's API keys (never the keys themselves)",
        tags: ["keys"],
        response: {
          200: {
            type: "object",
            required: ["keys"],
            properties: { keys: { type: "array", items: keySchema } },
          },
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const keys = await store.forTenant(identityOf(request).tenantId).listApiKeys();
      return { keys: keys.map(apiKeyView) };
    },
  );

  app.delete<{ Params: { keyId: string } }>(
    "/v1/keys/:keyId",
    {
      config: { permission: "keys.manage" },
      schema: {
        summary: "Revoke one of the caller's tenant's API keys",
        tags: ["keys"],
        params: {
          type: "object",
          required: ["keyId"],
          properties: { keyId: { type: "string", minLength: 1 } },
        },
        response: {
          200: { type: "object", required: ["apiKey"], properties: { apiKey: keySchema } },
          404: errorReference,
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const identity = identityOf(request);
      const { keyId } = request.params;
      const tenantStore = store.forTenant(identity.tenantId);
      const revoked = await tenantStore.revokeApiKey(keyId, environment.now());
      const stored = await store.findApiKey(keyId);
      if (!revoked && (stored === null || stored.tenantId !== identity.tenantId)) {
        return refuseOutsideTenant(
          request,
          violations,
          stored?.tenantId,
          { kind: "api_key", id: keyId },
          new CharterError("API_KEY_NOT_FOUND", `no API key ${keyId} in this tenant`, { details: { keyId } }),
        );
      }
      // Revoked now, or already revoked before: either way it is revoked.
      return { apiKey: apiKeyView(stored as NonNullable<typeof stored>) };
    },
  );
};
