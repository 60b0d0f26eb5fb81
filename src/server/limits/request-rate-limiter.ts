import type { RateLimitConfiguration } from "../../config/server-configuration-schema.js";
import { CharterError } from "../../foundation/charter-error.js";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { RunStore } from "../../store/run-store.js";
import type { CallerIdentity } from "../identity/caller-identity.js";
import { countRequest, type RateCount } from "./rate-windows.js";

/** Requests per minute from one client address when the configuration says nothing. */
export const defaultRequestsPerAddress = 120;

/** The API's request limits: checked for every route that needs credentials. */
export interface RequestRateLimiter {
  /** Before authentication: the client address's requests (so guessing keys is limited as well). */
  checkAddress(clientAddress: string): Promise<void>;
  /** After authentication: the tenant's and the user's requests. */
  checkCaller(identity: CallerIdentity): Promise<void>;
}

function refuse(scope: string, counted: RateCount, details: Readonly<Record<string, unknown>>): never {
  throw new CharterError(
    "RATE_LIMIT_EXCEEDED",
    `too many requests from this ${scope}: at most ${counted.limit} a minute; try again in ${counted.retryAfterSeconds} s`,
    {
      details: {
        scope,
        limit: counted.limit,
        windowSeconds: 60,
        retryAfterSeconds: counted.retryAfterSeconds,
        ...details,
      },
    },
  );
}

/** The limiter of a server that limits nothing (`charter view`): it counts nothing and so stores nothing. */
export const unlimitedRequests: RequestRateLimiter = {
  checkAddress: async () => {},
  checkCaller: async () => {},
};

export function createRequestRateLimiter(options: {
  readonly store: RunStore;
  readonly environment: RuntimeEnvironment;
  readonly limits?: RateLimitConfiguration;
}): RequestRateLimiter {
  const { store, environment } = options;
  const perAddress = options.limits?.perAddress ?? defaultRequestsPerAddress;
  const perTenant = options.limits?.perTenant;
  const perUser = options.limits?.perUser;
  return {
    async checkAddress(clientAddress) {
      const counted = await countRequest(store, environment, `address:${clientAddress}`, perAddress);
      if (counted.exceeded) refuse("address", counted, {});
    },
    async checkCaller(identity) {
      const tenantStore = store.forTenant(identity.tenantId);
      if (perTenant !== undefined) {
        const counted = await countRequest(tenantStore, environment, "tenant", perTenant);
        if (counted.exceeded) refuse("tenant", counted, { tenantId: identity.tenantId });
      }
      // A key made for no user is its own user: its requests are limited as one person's would be.
      const user =
        identity.userId !== null
          ? `user:${identity.userId}`
          : identity.credential.kind === "api_key"
            ? `key:${identity.credential.keyId}`
            : null;
      if (perUser !== undefined && user !== null) {
        const counted = await countRequest(tenantStore, environment, user, perUser);
        if (counted.exceeded) refuse("user", counted, { userId: identity.userId });
      }
    },
  };
}
