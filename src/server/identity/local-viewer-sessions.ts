import { randomBytes, timingSafeEqual } from "node:crypto";
import type { CallerIdentity } from "./caller-identity.js";

/**
 * The sign-in of `charter view`: a one-time token, printed in the address the command shows, that the page
 * exchanges once for a session credential (kept in that tab). The token is spent by its first exchange, so an
 * address seen later (in a shell history, a screenshot) signs nobody in. Sessions live as long as the process.
 */
export interface LocalViewerSessions {
  /** The token to print in the address (`/?token=...`). */
  readonly oneTimeToken: string;
  /** A new session credential for the one-time token, or null when the token is wrong or was already used. */
  exchange(token: string): string | null;
  /** The identity of a session credential, or null when it is none of this process's sessions. */
  identityOf(credential: string): CallerIdentity | null;
}

const sessionPrefix = "chv_";

export function createLocalViewerSessions(options: {
  /** The tenant shown (the store itself is already scoped to it). */
  readonly tenantLabel: string;
}): LocalViewerSessions {
  const oneTimeToken = randomBytes(24).toString("base64url");
  let spent = false;
  const sessions = new Set<string>();
  const identity: CallerIdentity = {
    tenantId: options.tenantLabel,
    userId: null,
    role: "viewer",
    credential: { kind: "local_session" },
  };
  return {
    oneTimeToken,
    exchange(token) {
      const given = Buffer.from(token, "utf8");
      const expected = Buffer.from(oneTimeToken, "utf8");
      if (spent || given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
      spent = true;
      const credential = `${sessionPrefix}${randomBytes(32).toString("base64url")}`;
      sessions.add(credential);
      return credential;
    },
    identityOf(credential) {
      return credential.startsWith(sessionPrefix) && sessions.has(credential) ? identity : null;
    },
  };
}
