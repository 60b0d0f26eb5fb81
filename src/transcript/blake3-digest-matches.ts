import { createBLAKE3, type IHasher } from "hash-wasm";

// A BLAKE3 instance of its own: foundation's blake3Hex always builds a hex string, which costs more than
// hashing a short text does. Verification only needs a yes or no, so it compares the digest bytes.
const hasher: IHasher = await createBLAKE3();

/** Whether BLAKE3(text) is `hexDigest` (64 lowercase hex digits), without building a hex string. */
export function blake3DigestMatches(text: string, hexDigest: string): boolean {
  if (hexDigest.length !== 64) return false;
  hasher.init();
  hasher.update(text);
  const digest = hasher.digest("binary");
  for (let index = 0; index < 32; index++) {
    const byte =
      (hexValue(hexDigest.charCodeAt(2 * index)) << 4) | hexValue(hexDigest.charCodeAt(2 * index + 1));
    if (byte !== digest[index]) return false;
  }
  return true;
}

// -1 for anything but a lowercase hex digit, which makes the combined byte negative: never a match.
function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}
