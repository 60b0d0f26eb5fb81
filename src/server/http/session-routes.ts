import type { FastifyPluginAsync } from "fastify";
import type { ServerPermission } from "../identity/server-permissions.js";
import { roleMayDo } from "../identity/server-permissions.js";
import { authenticatedErrors } from "./error-schema.js";
import { identityOf } from "./request-identity.js";

export interface SessionRoutesOptions {
  /** A server that changes nothing (`charter view`): no role may start, cancel or approve runs there. */
  readonly readOnly?: boolean;
}

const permissions: readonly ServerPermission[] = [
  "runs.read",
  "runs.start",
  "runs.cancel",
  "runs.approve",
  "stats.read",
  "tenant.configure",
  "keys.manage",
];

const readOnlyPermissions: ReadonlySet<ServerPermission> = new Set(["runs.read", "stats.read"]);

/**
 * `GET /v1/session`: who the credentials are (tenant, user, role) and what they may do here, so that a client
 * (the run viewer) shows an approve button only to those whose role allows it. Any role may ask.
 */
export const sessionRoutes: FastifyPluginAsync<SessionRoutesOptions> = async (app, options) => {
  app.get(
    "/v1/session",
    {
      config: { permission: "runs.read" },
      schema: {
        summary: "Who the credentials are and what they may do on this server",
        tags: ["session"],
        response: {
          200: {
            type: "object",
            required: ["tenantId", "userId", "role", "permissions", "readOnly"],
            properties: {
              tenantId: { type: ["string", "null"] },
              userId: { type: ["string", "null"] },
              role: { type: "string", enum: ["admin", "operator", "viewer"] },
              permissions: { type: "array", items: { type: "string" } },
              readOnly: {
                type: "boolean",
                description: "true on a server that changes nothing (charter view)",
              },
            },
          },
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const identity = identityOf(request);
      const readOnly = options.readOnly === true;
      return {
        tenantId: identity.tenantId,
        userId: identity.userId,
        role: identity.role,
        permissions: permissions.filter(
          (permission) =>
            roleMayDo(identity.role, permission) && (!readOnly || readOnlyPermissions.has(permission)),
        ),
        readOnly,
      };
    },
  );
};
