import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** Every API key starts with this, so that a leaked key is recognisable (and secret scanners can find it). */
export const apiKeyPrefix = "chk_";
const keyIdLength = 16;
const keyPattern = /^chk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

/** A new key: `chk_<key id>_<secret>`, the id 8 random bytes in hex, the secret 32 random bytes (base64url). */
export function newApiKeyText(random: (size: number) => Buffer = randomBytes): {
  readonly keyId: string;
  readonly key: string;
} {
  const keyId = random(keyIdLength / 2).toString("hex");
  const secret = random(32).toString("base64url");
  return { keyId, key: `${apiKeyPrefix}${keyId}_${secret}` };
}

/** The key id of a text shaped like a key, or null. */
export function apiKeyIdOf(text: string): string | null {
  return keyPattern.exec(text)?.[1] ?? null;
}

/**
 * The hash stored for a key: SHA-256 of the whole key. A key holds 256 random bits, so a fast hash is as safe as a
 * slow one here (nothing to guess), and costs microseconds per request.
 */
export function apiKeyHash(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/** Compares a presented key with a stored hash in constant time. */
export function apiKeyMatches(key: string, storedHash: string): boolean {
  const presented = Buffer.from(apiKeyHash(key), "hex");
  const stored = Buffer.from(storedHash, "hex");
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
