import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/** The prefix of a sealed secret's text, with its format version. */
const sealedPrefix = "charter-sealed:v1:";
const algorithm = "aes-256-gcm";
const nonceLength = 12;
const tagLength = 16;

/** Whether a stored value is a sealed secret (as opposed to a key stored in the clear by an earlier version). */
export function isSealedSecret(value: string): boolean {
  return value.startsWith(sealedPrefix);
}

/**
 * Seals a secret (a tenant's provider key) for storage with AES-256-GCM under the server's secrets key. `context`
 * (the tenant and the field) is authenticated with it: a sealed value copied to another tenant's document, or to
 * another provider's field, does not open there.
 */
export function sealSecret(secret: string, key: Uint8Array, context: string): string {
  const nonce = randomBytes(nonceLength);
  const cipher = createCipheriv(algorithm, key, nonce, { authTagLength: tagLength });
  cipher.setAAD(Buffer.from(context, "utf8"));
  const sealed = Buffer.concat([cipher.update(secret, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return `${sealedPrefix}${nonce.toString("base64url")}:${sealed.toString("base64url")}`;
}

/** The secret a sealed value holds, or null when it does not open with this key and context (or is malformed). */
export function openSealedSecret(value: string, key: Uint8Array, context: string): string | null {
  if (!isSealedSecret(value)) return null;
  const [nonceText, sealedText] = value.slice(sealedPrefix.length).split(":");
  if (nonceText === undefined || sealedText === undefined) return null;
  const nonce = Buffer.from(nonceText, "base64url");
  const sealed = Buffer.from(sealedText, "base64url");
  if (nonce.length !== nonceLength || sealed.length < tagLength) return null;
  try {
    const decipher = createDecipheriv(algorithm, key, nonce, { authTagLength: tagLength });
    decipher.setAAD(Buffer.from(context, "utf8"));
    decipher.setAuthTag(sealed.subarray(sealed.length - tagLength));
    return Buffer.concat([
      decipher.update(sealed.subarray(0, sealed.length - tagLength)),
      decipher.final(),
    ]).toString("utf8");
  } catch {
    return null;
  }
}

/** What a tenant's provider key is sealed with: its tenant and provider. */
export function providerKeyContext(tenantId: string, provider: string): string {
  return `tenant\u0000${tenantId}\u0000providers\u0000${provider}\u0000apiKey`;
}
