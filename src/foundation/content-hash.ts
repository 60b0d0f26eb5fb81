import { createBLAKE3, type IHasher } from "hash-wasm";
import { canonicalJson } from "./canonical-json.js";

// One WebAssembly BLAKE3 instance, created once; every hash after that is synchronous.
const hasher: IHasher = await createBLAKE3();

// Hex through one reused 64-byte buffer and a table of digit pairs, read out as one flat string: no chain of 32
// partial strings (less garbage when a thousand sessions hash at once), and ~15 % faster per hash than either
// hash-wasm's own hex digest or string concatenation.
const hexDigitPairs = new Uint16Array(256);
for (let byte = 0; byte < 256; byte++) {
  const pair = byte.toString(16).padStart(2, "0");
  hexDigitPairs[byte] = pair.charCodeAt(0) | (pair.charCodeAt(1) << 8);
}
const hexText = Buffer.allocUnsafeSlow(64);

function digestHex(): string {
  const digest = hasher.digest("binary");
  for (let index = 0; index < 32; index++) {
    const pair = hexDigitPairs[digest[index] as number] as number;
    hexText[2 * index] = pair & 0xff;
    hexText[2 * index + 1] = pair >> 8;
  }
  return hexText.toString("latin1", 0, 64);
}

// Short texts recur: every turn's transcript hashes the same small actions and results (`{"results":1}`,
// `{"calls":[]}`, a COMMIT's `{"forced_final_turn":false,"next":"INFER"}`...). Remembering their hashes saves
// about one hash call in eight; the map is emptied when full, so memory stays bounded.
const shortTextLimit = 64;
const rememberedLimit = 1024;
const rememberedHashes = new Map<string, string>();

// Texts are encoded into one reused buffer rather than a new Buffer per hash: less garbage, which shows when a
// thousand sessions run at once. A UTF-8 encoding takes at most three bytes per UTF-16 code unit.
const scratch = Buffer.allocUnsafeSlow(64 * 1024);
const scratchTextLimit = Math.floor(scratch.length / 3);

function hashBytes(data: string | Uint8Array): string {
  hasher.init();
  if (typeof data === "string" && data.length <= scratchTextLimit) {
    hasher.update(scratch.subarray(0, scratch.write(data, 0, "utf8")));
  } else hasher.update(data);
  return digestHex();
}

/** BLAKE3 (256-bit, hex) of a string's UTF-8 bytes or of raw bytes. */
export function blake3Hex(data: string | Uint8Array): string {
  if (typeof data !== "string" || data.length > shortTextLimit) return hashBytes(data);
  let hash = rememberedHashes.get(data);
  if (hash === undefined) {
    hash = hashBytes(data);
    if (rememberedHashes.size >= rememberedLimit) rememberedHashes.clear();
    rememberedHashes.set(data, hash);
  }
  return hash;
}

/** BLAKE3 of `first + second` (UTF-8), without building the joined string (a chain step: previous hash + text). */
export function blake3OfConcatenation(first: string, second: string): string {
  if (first.length + second.length > scratchTextLimit) return hashBytes(first + second);
  hasher.init();
  const firstBytes = scratch.write(first, 0, "utf8");
  hasher.update(scratch.subarray(0, firstBytes + scratch.write(second, firstBytes, "utf8")));
  return digestHex();
}

/** BLAKE3 of the RFC 8785 canonical JSON of a value: Charter's content hash. */
export function contentHash(value: unknown): string {
  return blake3Hex(canonicalJson(value));
}

/** BLAKE3 over several parts, each length-prefixed so that part boundaries are unambiguous. */
export function blake3OfParts(parts: readonly string[]): string {
  hasher.init();
  for (const part of parts) {
    hasher.update(`${part.length}:`);
    hasher.update(part);
  }
  return digestHex();
}
