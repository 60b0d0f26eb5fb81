import type { FastifyRequest } from "fastify";
import { CharterError } from "../../foundation/charter-error.js";
import type { CallerIdentity } from "../identity/caller-identity.js";
import type { ServerPermission } from "../identity/server-permissions.js";

declare module "fastify" {
  interface FastifyRequest {
    /** Who made the request (set by the authentication hook on every route that is not public). */
    identity: CallerIdentity | null;
  }
  interface FastifyContextConfig {
    /** The route answers without credentials (health, the OpenAPI document). */
    readonly public?: boolean;
    /** What the caller's role must allow for the route (checked before the handler runs). */
    readonly permission?: ServerPermission;
  }
}

/** The caller of an authenticated route (the hook has run, so there is one). */
export function identityOf(request: FastifyRequest): CallerIdentity {
  if (request.identity === null) {
    throw new CharterError("INTERNAL_ERROR", "a route that needs credentials ran without them", {
      details: { route: request.routeOptions.url ?? null },
    });
  }
  return request.identity;
}
