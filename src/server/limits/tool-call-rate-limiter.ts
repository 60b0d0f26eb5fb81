import type { RateLimitConfiguration } from "../../config/server-configuration-schema.js";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { ToolCallAdmission } from "../../runner/tool-call-admission.js";
import type { RunStore } from "../../store/run-store.js";
import { countRequest } from "./rate-windows.js";

/** `server.rateLimits.toolCalls`: per tool class, for a tenant's runs and for one user's. */
export type ToolCallLimits = NonNullable<RateLimitConfiguration["toolCalls"]>;

/**
 * The admission of a server run's tool calls: each call that would run is counted for its tool class against the
 * run's tenant (`tool:<class>`) and the user who started it (`user:<id>:tool:<class>`), in the run store's
 * 60-second windows, so that every worker on one store shares the counts. Over a limit the call does not run: the
 * model is told `rate_limit_exceeded` with `retryAfter`. Undefined when no tool-call limit is configured.
 */
export function createToolCallAdmission(options: {
  readonly store: RunStore;
  readonly environment: RuntimeEnvironment;
  readonly limits: ToolCallLimits | undefined;
  readonly tenantId: string;
  readonly userId: string | null;
}): ToolCallAdmission | undefined {
  const { limits, environment } = options;
  if (limits === undefined) return undefined;
  const tenantLimits = limits.perTenant ?? {};
  const userLimits = limits.perUser ?? {};
  if (Object.keys(tenantLimits).length === 0 && Object.keys(userLimits).length === 0) return undefined;
  const store = options.store.forTenant(options.tenantId);
  return async ({ tool, permissionClass }) => {
    const checks: { scope: string; subject: string; limit: number | undefined }[] = [
      { scope: "tenant", subject: `tool:${permissionClass}`, limit: tenantLimits[permissionClass] },
      ...(options.userId !== null
        ? [
            {
              scope: "user",
              subject: `user:${options.userId}:tool:${permissionClass}`,
              limit: userLimits[permissionClass],
            },
          ]
        : []),
    ];
    for (const { scope, subject, limit } of checks) {
      if (limit === undefined) continue;
      const counted = await countRequest(store, environment, subject, limit);
      if (counted.exceeded) {
        return {
          code: "RATE_LIMIT_EXCEEDED",
          failureClass: "rate_limit_exceeded",
          message: `'${tool}' is a ${permissionClass} tool, and this ${scope} may make at most ${limit} ${permissionClass} tool calls a minute`,
          retryAfterSeconds: counted.retryAfterSeconds,
        };
      }
    }
    return null;
  };
}
