/** The longest prefix of `text` within `maxBytes` UTF-8 bytes that does not split a character. */
function prefixWithinBytes(text: string, maxBytes: number): string {
  // Every character is at least one byte, so the first `maxBytes` characters hold the first `maxBytes` bytes.
  const cut = Buffer.from(text.slice(0, maxBytes), "utf8").subarray(0, maxBytes).toString("utf8");
  // A multi-byte character split at the cut decodes as U+FFFD; drop it rather than show a broken character.
  return cut.endsWith("\uFFFD") && !text.startsWith(cut) ? cut.slice(0, -1) : cut;
}

/**
 * Cuts text so that it, followed by `marker`, fits in `maxBytes` UTF-8 bytes, without splitting a character.
 * Text already within the limit is returned unchanged; the result never exceeds `maxBytes`, even when the
 * marker alone would.
 */
export function truncateToBytes(text: string, maxBytes: number, marker: string): string {
  if (text.length <= maxBytes && Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  const markerBytes = Buffer.byteLength(marker, "utf8");
  if (markerBytes >= maxBytes) return prefixWithinBytes(marker, Math.max(0, maxBytes));
  return prefixWithinBytes(text, maxBytes - markerBytes) + marker;
}
