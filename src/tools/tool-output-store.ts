import { appendFile, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve, sep } from "node:path";
import { CharterError } from "../foundation/charter-error.js";

/** What storing one oversized output produced: the handle the model is given and the output's size. */
export interface StoredToolOutput {
  readonly handle: string;
  readonly bytes: number;
  readonly lines: number;
  readonly tokens: number;
}

export interface ToolOutputLines {
  readonly handle: string;
  /** 1-based, inclusive; `startLine > endLine` when the range is past the end. */
  readonly startLine: number;
  readonly endLine: number;
  readonly totalLines: number;
  readonly lines: readonly string[];
}

export interface ToolOutputMatch {
  readonly line: number;
  readonly text: string;
}

export interface ToolOutputMatches {
  readonly handle: string;
  readonly totalLines: number;
  /** How many lines matched in all; `matches` holds at most `maxMatches` of them. */
  readonly totalMatches: number;
  readonly matches: readonly ToolOutputMatch[];
}

/**
 * Oversized tool outputs of one run, kept on disk under `<tmp>/charter-<runHash>/` (seed 000 §3): one
 * `<handle>.txt` per output, and `index.jsonl` saying which tool call produced each, for inspection afterwards.
 */
export interface ToolOutputStore {
  readonly directory: string;
  store(
    text: string,
    origin: { readonly toolName: string; readonly callId: string },
  ): Promise<StoredToolOutput>;
  read(
    handle: string,
    range?: { readonly startLine?: number; readonly endLine?: number },
  ): Promise<ToolOutputLines>;
  /** Lines containing `pattern`, taken literally unless `regex` is set. */
  grep(
    handle: string,
    pattern: string,
    options?: { readonly regex?: boolean; readonly maxMatches?: number },
  ): Promise<ToolOutputMatches>;
  /** Deletes the run's directory and everything stored in it. */
  remove(): Promise<void>;
}

export interface ToolOutputStoreOptions {
  /** Names the directory; letters, digits, `_` and `-` only. */
  readonly runHash: string;
  /** Defaults to the system temporary directory, which honours `TMPDIR`. */
  readonly baseDirectory?: string;
  /** Counts tokens for the handle message; without it, tokens are estimated as bytes / 4. */
  readonly countTokens?: (text: string) => number;
}

const runHashPattern = /^[A-Za-z0-9_-]{1,128}$/;
const handlePattern = /^out-[1-9][0-9]{0,8}$/;
const defaultMaxMatches = 50;

function countLines(text: string): number {
  if (text === "") return 0;
  let lines = 1;
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) lines++;
  return text.endsWith("\n") ? lines - 1 : lines;
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  return lines;
}

function invalidHandle(handle: string, reason: string): CharterError {
  return new CharterError(
    "TOOL_OUTPUT_HANDLE_INVALID",
    `invalid tool output handle '${handle.slice(0, 80)}': ${reason}`,
    {
      details: { handle: handle.slice(0, 200), reason },
    },
  );
}

export function createToolOutputStore(options: ToolOutputStoreOptions): ToolOutputStore {
  if (!runHashPattern.test(options.runHash)) {
    throw new CharterError(
      "CONFIGURATION_INVALID",
      "tool output store: the run hash must match [A-Za-z0-9_-]{1,128}",
      {
        details: { runHash: options.runHash.slice(0, 200) },
      },
    );
  }
  const directory = resolve(options.baseDirectory ?? tmpdir(), `charter-${options.runHash}`);
  const countTokens =
    options.countTokens ?? ((text: string) => Math.ceil(Buffer.byteLength(text, "utf8") / 4));
  let directoryReady: Promise<unknown> | null = null;
  let sequence = 0;

  /** The file of a handle, only ever inside the run directory: the handle is checked before any path is built. */
  function pathOf(handle: string): string {
    if (!handlePattern.test(handle)) throw invalidHandle(handle, "handles look like out-<n>");
    const path = join(directory, `${handle}.txt`);
    if (!path.startsWith(directory + sep)) throw invalidHandle(handle, "resolves outside the run directory");
    return path;
  }

  async function load(handle: string): Promise<string[]> {
    const path = pathOf(handle);
    try {
      return splitLines(await readFile(path, "utf8"));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT")
        throw invalidHandle(handle, "no such stored output");
      throw error;
    }
  }

  return {
    directory,

    async store(text, origin) {
      // Created once, on the first oversized output; a failure is not remembered, so a later store may retry.
      directoryReady ??= mkdir(directory, { recursive: true, mode: 0o700 }).catch((error: unknown) => {
        directoryReady = null;
        throw error;
      });
      await directoryReady;
      // `wx` never overwrites: a handle left by an earlier process using the same run hash is skipped.
      for (;;) {
        sequence++;
        const handle = `out-${sequence}`;
        try {
          await writeFile(pathOf(handle), text, { mode: 0o600, flag: "wx" });
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
          throw error;
        }
        const stored = Object.freeze({
          handle,
          bytes: Buffer.byteLength(text, "utf8"),
          lines: countLines(text),
          tokens: countTokens(text),
        });
        const entry = { ...stored, toolName: origin.toolName, callId: origin.callId };
        await appendFile(join(directory, "index.jsonl"), `${JSON.stringify(entry)}\n`, { mode: 0o600 });
        return stored;
      }
    },

    async read(handle, range = {}) {
      const lines = await load(handle);
      const startLine = Math.max(1, Math.trunc(range.startLine ?? 1));
      const endLine = Math.min(lines.length, Math.trunc(range.endLine ?? lines.length));
      return Object.freeze({
        handle,
        startLine,
        endLine,
        totalLines: lines.length,
        lines: Object.freeze(endLine >= startLine ? lines.slice(startLine - 1, endLine) : []),
      });
    },

    async grep(handle, pattern, grepOptions = {}) {
      let matcher: (line: string) => boolean;
      if (grepOptions.regex === true) {
        let expression: RegExp;
        try {
          expression = new RegExp(pattern);
        } catch (error) {
          throw new CharterError(
            "TOOL_INPUT_INVALID",
            `invalid regular expression: ${(error as Error).message}`,
            {
              details: { pattern: pattern.slice(0, 200) },
            },
          );
        }
        matcher = (line) => expression.test(line);
      } else {
        matcher = (line) => line.includes(pattern);
      }
      const lines = await load(handle);
      const maxMatches = Math.max(1, Math.trunc(grepOptions.maxMatches ?? defaultMaxMatches));
      const matches: ToolOutputMatch[] = [];
      let totalMatches = 0;
      for (let index = 0; index < lines.length; index++) {
        const line = lines[index]!;
        if (!matcher(line)) continue;
        totalMatches++;
        if (matches.length < maxMatches) matches.push(Object.freeze({ line: index + 1, text: line }));
      }
      return Object.freeze({
        handle,
        totalLines: lines.length,
        totalMatches,
        matches: Object.freeze(matches),
      });
    },

    async remove() {
      directoryReady = null;
      await rm(directory, { recursive: true, force: true });
    },
  };
}
