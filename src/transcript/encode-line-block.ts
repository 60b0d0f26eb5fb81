import type { LineBlock } from "./check-transcript-line-block.js";

const encoder = new TextEncoder();

/** `String.prototype.isWellFormed` (ES2024, in every Node this package supports; the compiled lib is ES2023). */
function isWellFormed(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** UTF-8 takes at most three bytes per UTF-16 unit. */
const maximumBytesPerUnit = 3;

/**
 * Stored lines as one block of UTF-8 bytes with each line's end, for `checkTranscriptLineBlock`; null when the
 * bytes would not be the lines exactly: a lone surrogate, which the encoder would replace, makes the block one
 * that only the line-by-line check can judge. The bytes and ends are in buffers of their own (the bytes' with
 * room to spare), so that both can be transferred to another thread.
 */
export function encodeLineBlock(
  lines: readonly string[],
): (LineBlock & { readonly lineEnds: Int32Array }) | null {
  let units = 0;
  for (const line of lines) units += line.length;
  // Room for ASCII text and then some; grown when a line might not fit.
  let bytes = new Uint8Array(units + (units >> 3) + 64);
  const lineEnds = new Int32Array(lines.length);
  let end = 0;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    if (!isWellFormed(line)) return null;
    if (end + line.length * maximumBytesPerUnit > bytes.length) {
      const larger = new Uint8Array(Math.max(bytes.length * 2, end + line.length * maximumBytesPerUnit));
      larger.set(bytes.subarray(0, end));
      bytes = larger;
    }
    end += encoder.encodeInto(line, bytes.subarray(end)).written;
    lineEnds[index] = end;
  }
  return { bytes: bytes.subarray(0, end), lineEnds };
}
