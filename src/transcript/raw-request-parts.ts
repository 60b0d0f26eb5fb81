import { CharterError } from "../foundation/charter-error.js";
import { blake3Hex } from "../foundation/content-hash.js";
import { isRawPayloadHash } from "./run-directory-layout.js";

/**
 * A provider request is stored by parts. The request body carries the whole conversation every turn, so storing
 * it whole would canonicalise, redact, hash and write the entire history again on each turn (cost and storage
 * growing with the square of the run's length). Instead every element of each top-level array of the body (the
 * messages, the tools, Gemini's contents...) is stored once as its own raw payload, and the request itself as
 *
 * `{"format":"charter.raw-request","head":{...the body's other fields},"parts":{"messages":[hash,...]},"version":1}`
 *
 * The composite's own hash is what the INFER entry records as `raw_request_hash`: the chain binds the composite,
 * the composite binds each part's hash, and each part file must hash to its name; verification also checks that
 * every part a composite names is present and intact (see bindRawRequestParts).
 */
export const rawRequestFormat = "charter.raw-request";
export const rawRequestVersion = 1;

export interface RawRequestComposite {
  readonly format: typeof rawRequestFormat;
  readonly version: typeof rawRequestVersion;
  readonly head: Readonly<Record<string, unknown>>;
  readonly parts: Readonly<Record<string, readonly string[]>>;
}

// Canonical JSON orders keys, so a composite always begins with these bytes: payloads that do not are never parsed.
const compositePrefix = `{"format":"${rawRequestFormat}",`;
const compositePrefixBytes = new TextEncoder().encode(compositePrefix);

/**
 * The part hashes a stored payload names when it is a raw-request composite, else null. A payload that starts like
 * a composite but is not a well-formed one names a part that cannot exist, so it fails verification.
 */
export function rawRequestPartHashes(content: string | Uint8Array): readonly string[] | null {
  if (typeof content === "string") {
    if (!content.startsWith(compositePrefix)) return null;
  } else {
    if (content.length < compositePrefixBytes.length) return null;
    for (let index = 0; index < compositePrefixBytes.length; index++) {
      if (content[index] !== compositePrefixBytes[index]) return null;
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof content === "string" ? content : new TextDecoder().decode(content));
  } catch {
    return [malformedComposite];
  }
  const parts = (parsed as { parts?: unknown }).parts;
  if (parts === null || typeof parts !== "object" || Array.isArray(parts)) return [malformedComposite];
  const hashes: string[] = [];
  for (const list of Object.values(parts)) {
    if (!Array.isArray(list)) return [malformedComposite];
    for (const hash of list) {
      if (typeof hash !== "string" || !isRawPayloadHash(hash)) return [malformedComposite];
      hashes.push(hash);
    }
  }
  return hashes;
}

/** Named by a malformed composite: no payload can have it as its name. */
const malformedComposite = "malformed raw-request composite";

/**
 * Marks every composite whose parts are not all present and intact as not intact itself, so that an entry
 * referencing it fails as a damaged raw payload. `composites` maps a composite's hash to the parts it names.
 * Returns the hashes of the composites so marked.
 */
export function bindRawRequestParts(
  rawIndex: Map<string, boolean>,
  composites: ReadonlyMap<string, readonly string[]>,
): string[] {
  const broken: string[] = [];
  for (const [hash, parts] of composites) {
    if (rawIndex.get(hash) !== true) continue;
    if (parts.some((part) => rawIndex.get(part) !== true)) {
      rawIndex.set(hash, false);
      broken.push(hash);
    }
  }
  return broken;
}

/**
 * The request body a composite stands for, rebuilt from its parts (`readPart` returns a stored payload's parsed
 * JSON, or undefined when it is missing). A payload that is not a composite is returned as it is.
 */
export function reassembleRawRequest(payload: unknown, readPart: (hash: string) => unknown): unknown {
  if (!isRawRequestComposite(payload)) return payload;
  const body: Record<string, unknown> = { ...payload.head };
  for (const [key, hashes] of Object.entries(payload.parts)) {
    body[key] = hashes.map((hash) => {
      const part = readPart(hash);
      if (part === undefined) {
        throw new CharterError("TRANSCRIPT_INVALID", `raw request part ${hash} is missing`, {
          details: { part: hash, reason: "raw_request_part_missing" },
        });
      }
      return part;
    });
  }
  return body;
}

function isRawRequestComposite(payload: unknown): payload is RawRequestComposite {
  return (
    payload !== null &&
    typeof payload === "object" &&
    (payload as { format?: unknown }).format === rawRequestFormat &&
    (payload as { version?: unknown }).version === rawRequestVersion
  );
}

/** Whether a text's hash is its name and, when it is a composite, which parts it names. */
export function checkRawPayloadText(
  hash: string,
  content: string | Uint8Array,
): { intact: boolean; parts: readonly string[] | null } {
  const intact = isRawPayloadHash(hash) && blake3Hex(content) === hash;
  return { intact, parts: intact ? rawRequestPartHashes(content) : null };
}
