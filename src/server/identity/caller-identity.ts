import type { ServerRole } from "../execution/run-request.js";

/** Who made a request, as its credentials say: the tenant it acts in, the user, the role. */
export interface CallerIdentity {
  readonly tenantId: string;
  readonly userId: string | null;
  readonly role: ServerRole;
  /** How it proved it: an API key (with its id) or a JWT. */
  readonly credential:
    | { readonly kind: "api_key"; readonly keyId: string }
    | { readonly kind: "jwt" }
    /** A session of `charter view`, from its one-time sign-in token. */
    | { readonly kind: "local_session" };
}
