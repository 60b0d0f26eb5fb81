import { open } from "node:fs/promises";

/** What `readTranscriptLines` saw beyond the complete lines it handed over. */
export interface TranscriptLineReadResult {
  /** Complete (newline-terminated) lines handed to the callback. */
  readonly lines: number;
  /** True when the callback asked to stop before the end of the file. */
  readonly stopped: boolean;
  /** Text after the last newline: a line cut off mid-write, or null when the file ends with a newline. */
  readonly incompleteLastLine: string | null;
}

const chunkBytes = 1 << 20;
const newline = 0x0a;
// Strict: a lenient decoder turns a damaged byte into U+FFFD, which an intact text may contain as well.
// The BOM is kept, so that bytes added at the start of a line are not silently dropped.
const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Where to start reading: a byte offset at the start of a line, and that line's index. */
export interface TranscriptLineReadStart {
  readonly offset: number;
  readonly lineIndex: number;
}

/**
 * Calls `onLine` for every newline-terminated line of a file, without the newline (null for a line that is
 * not valid UTF-8), synchronously within each chunk: the file is read in 1 MiB chunks and split, so a large
 * transcript costs one await per chunk, not per line. `onLine` returns false to stop. A newline byte never
 * occurs inside a multi-byte UTF-8 sequence, so splitting on it before decoding is safe. `start` skips the
 * lines before a line known to start at that offset; `lines` then counts the skipped lines too.
 */
export async function readTranscriptLines(
  path: string,
  onLine: (line: string | null, lineIndex: number) => boolean | undefined,
  start: TranscriptLineReadStart = { offset: 0, lineIndex: 0 },
): Promise<TranscriptLineReadResult> {
  const handle = await open(path, "r");
  try {
    const chunk = Buffer.allocUnsafe(chunkBytes);
    let carry: Buffer | null = null;
    let lineIndex = start.lineIndex;
    let position = start.offset;
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunkBytes, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      const data: Buffer =
        carry === null ? chunk.subarray(0, bytesRead) : Buffer.concat([carry, chunk.subarray(0, bytesRead)]);
      const lastNewline = data.lastIndexOf(newline);
      if (lastNewline === -1) {
        // The chunk buffer is reused by the next read, so what is carried over must be a copy.
        carry = Buffer.from(data);
        continue;
      }
      carry = lastNewline + 1 < data.length ? Buffer.from(data.subarray(lastNewline + 1)) : null;
      for (const line of decodeLines(data.subarray(0, lastNewline))) {
        if (onLine(line, lineIndex) === false)
          return { lines: lineIndex + 1, stopped: true, incompleteLastLine: null };
        lineIndex++;
      }
    }
    return {
      lines: lineIndex,
      stopped: false,
      incompleteLastLine: carry === null ? null : carry.toString("utf8"),
    };
  } finally {
    await handle.close();
  }
}

/** The lines of whole-line bytes; a line that is not valid UTF-8 becomes null. */
function decodeLines(bytes: Buffer): (string | null)[] {
  try {
    return strictDecoder.decode(bytes).split("\n");
  } catch {
    // Rare (a damaged file): decode line by line to tell which lines are affected.
    const lines: (string | null)[] = [];
    let start = 0;
    for (;;) {
      const end = bytes.indexOf(newline, start);
      try {
        lines.push(strictDecoder.decode(bytes.subarray(start, end === -1 ? bytes.length : end)));
      } catch {
        lines.push(null);
      }
      if (end === -1) return lines;
      start = end + 1;
    }
  }
}
