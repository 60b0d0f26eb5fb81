import type { LineBlock } from "./check-transcript-line-block.js";

const encoder = new TextEncoder();

/** `String.prototype.isWellFormed` (ES2024, in every Node this package supports; the compiled lib is ES2023). */
function isWellFormed(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/**
 * Stored lines as one block of UTF-8 bytes with each line's end, for `checkTranscriptLineBlock`; null when the
 * bytes would not be the lines exactly: a lone surrogate, which the encoder would replace, makes the block one
 * that only the line-by-line check can judge. The bytes have an ArrayBuffer of their own, to be transferred.
 */
export function encodeLineBlock(
  lines: readonly string[],
): (LineBlock & { readonly lineEnds: Int32Array }) | null {
  const text = lines.join("");
  if (!isWellFormed(text)) return null;
  const bytes = encoder.encode(text);
  const lineEnds = new Int32Array(lines.length);
  // All ASCII (the usual case): bytes and characters coincide, so the ends are the lengths added up.
  const ascii = bytes.length === text.length;
  let end = 0;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    end += ascii ? line.length : Buffer.byteLength(line, "utf8");
    lineEnds[index] = end;
  }
  return { bytes, lineEnds };
}
