import { truncateToBytes } from "../truncate-to-bytes.js";

/** A run of whole lines (or one piece of a line too long for a chunk), with the line numbers it covers. */
export interface OutputChunk {
  readonly text: string;
  readonly firstLine: number;
  readonly lastLine: number;
}

export interface ChunkedLines {
  readonly chunks: readonly OutputChunk[];
  /** The last line whose text is wholly in the chunks; `firstLine - 1` when none is. */
  readonly coveredThrough: number;
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** Pieces of at most `maxBytes` bytes each, never splitting a character. */
function piecesOf(line: string, maxBytes: number): string[] {
  const pieces: string[] = [];
  let rest = line;
  while (rest !== "") {
    const piece = truncateToBytes(rest, maxBytes, "");
    pieces.push(piece);
    rest = rest.slice(piece.length);
  }
  return pieces;
}

/**
 * Groups lines (numbered from `firstLine`) into at most `maxChunks` chunks of at most `chunkBytes` UTF-8
 * bytes each, line breaks included. Lines stay whole unless one alone is longer than a chunk, which is then
 * split into chunk-sized pieces. Lines beyond the last chunk are left out; `coveredThrough` says where.
 */
export function chunkLines(
  lines: readonly string[],
  firstLine: number,
  limits: { readonly chunkBytes: number; readonly maxChunks: number },
): ChunkedLines {
  const chunks: OutputChunk[] = [];
  let current: string[] = [];
  let currentBytes = 0;
  let currentFirst = firstLine;

  const flush = () => {
    if (current.length === 0) return;
    chunks.push({
      text: current.join("\n"),
      firstLine: currentFirst,
      lastLine: currentFirst + current.length - 1,
    });
    current = [];
    currentBytes = 0;
  };

  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    const lineNumber = firstLine + index;
    const size = byteLength(line);
    if (size > limits.chunkBytes) {
      flush();
      const pieces = piecesOf(line, limits.chunkBytes);
      if (chunks.length + pieces.length > limits.maxChunks) {
        // Only part of the line would fit: it is left for a later extraction, whole.
        return { chunks, coveredThrough: lineNumber - 1 };
      }
      for (const piece of pieces) chunks.push({ text: piece, firstLine: lineNumber, lastLine: lineNumber });
      currentFirst = lineNumber + 1;
      continue;
    }
    const separator = current.length === 0 ? 0 : 1;
    if (currentBytes + separator + size > limits.chunkBytes) flush();
    if (current.length === 0) {
      if (chunks.length >= limits.maxChunks) return { chunks, coveredThrough: lineNumber - 1 };
      currentFirst = lineNumber;
    }
    currentBytes += (current.length === 0 ? 0 : 1) + size;
    current.push(line);
  }
  flush();
  return { chunks, coveredThrough: firstLine + lines.length - 1 };
}
