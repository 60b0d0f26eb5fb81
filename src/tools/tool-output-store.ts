import { constants } from "node:fs";
import { chmod, lstat, mkdir, open, rm } from "node:fs/promises";
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
  /** Applied to each output before it is written (the run's secret redactor): nothing is stored in clear. */
  readonly redact?: (text: string) => string;
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
  // The handles this run issued: only those are served. A process resuming the run learns the earlier ones from
  // the folder's index, which only this user can write (the folder is checked to be private before it is read).
  const issued = new Set<string>();

  /** The file of a handle, only ever inside the run directory: the handle is checked before any path is built. */
  function pathOf(handle: string): string {
    if (!handlePattern.test(handle)) throw invalidHandle(handle, "handles look like out-<n>");
    const path = join(directory, `${handle}.txt`);
    if (!path.startsWith(directory + sep)) throw invalidHandle(handle, "resolves outside the run directory");
    return path;
  }

  async function wasIssued(handle: string): Promise<boolean> {
    if (issued.has(handle)) return true;
    if (!(await checkPrivateDirectory(directory, { missingIsEmpty: true }))) return false;
    let index: string;
    try {
      index = await readWithoutFollowing(join(directory, indexFileName));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw error;
    }
    for (const line of index.split("\n")) {
      if (line === "") continue;
      try {
        const entry = JSON.parse(line) as { handle?: unknown };
        if (typeof entry.handle === "string" && handlePattern.test(entry.handle)) issued.add(entry.handle);
      } catch {
        // A torn last line (a process killed while appending) names no handle.
      }
    }
    return issued.has(handle);
  }

  async function load(handle: string): Promise<string[]> {
    const path = pathOf(handle);
    if (!(await wasIssued(handle))) throw invalidHandle(handle, "this run stored no output under it");
    try {
      return splitLines(await readWithoutFollowing(path));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") throw invalidHandle(handle, "no such stored output");
      if (code === "ELOOP" || code === "EMLINK")
        throw invalidHandle(handle, "the stored output is a symbolic link");
      throw error;
    }
  }

  return {
    directory,

    async store(output, origin) {
      const text = options.redact === undefined ? output : options.redact(output);
      // Created once, on the first oversized output; a failure is not remembered, so a later store may retry.
      directoryReady ??= mkdir(directory, { recursive: true, mode: 0o700 })
        .then(() => checkPrivateDirectory(directory, { missingIsEmpty: false }))
        .catch((error: unknown) => {
          directoryReady = null;
          throw error;
        });
      await directoryReady;
      // `wx` never overwrites: a handle left by an earlier process using the same run hash is skipped.
      for (;;) {
        sequence++;
        const handle = `out-${sequence}`;
        try {
          // O_EXCL: never through a symbolic link, never over an existing file.
          await writeWithoutFollowing(pathOf(handle), text, "wx");
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
        await writeWithoutFollowing(join(directory, indexFileName), `${JSON.stringify(entry)}\n`, "a");
        issued.add(handle);
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
      issued.clear();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

const indexFileName = "index.jsonl";

/** Reads a file, refusing a symbolic link in its last component (ELOOP) and anything but a regular file. */
async function readWithoutFollowing(path: string): Promise<string> {
  const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    if (!(await file.stat()).isFile()) {
      throw Object.assign(new Error(`${path} is not a regular file`), { code: "ELOOP" });
    }
    return await file.readFile("utf8");
  } finally {
    await file.close();
  }
}

/** Writes (`wx`: creates) or appends (`a`) to a file private to the user, never through a symbolic link. */
async function writeWithoutFollowing(path: string, text: string, mode: "wx" | "a"): Promise<void> {
  const flags =
    constants.O_WRONLY |
    constants.O_CREAT |
    constants.O_NOFOLLOW |
    (mode === "wx" ? constants.O_EXCL : constants.O_APPEND);
  const file = await open(path, flags, 0o600);
  try {
    await file.writeFile(text, "utf8");
  } finally {
    await file.close();
  }
}

/**
 * Checks that the run's folder is a real directory (not a symbolic link planted in its place) owned by this user,
 * and makes it private (0700) if it was not. Another user's folder, or a link, is refused: outputs written there
 * could be read, or outputs read from there could be forged. Returns false when the folder does not exist and
 * `missingIsEmpty` says that is fine (nothing was stored yet).
 */
async function checkPrivateDirectory(
  directory: string,
  options: { readonly missingIsEmpty: boolean },
): Promise<boolean> {
  let status: Awaited<ReturnType<typeof lstat>>;
  try {
    status = await lstat(directory);
  } catch (error) {
    if (options.missingIsEmpty && (error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
  const owner = typeof process.getuid === "function" ? process.getuid() : null;
  if (!status.isDirectory() || (owner !== null && status.uid !== owner)) {
    throw new CharterError(
      "TOOL_OUTPUT_FOLDER_UNSAFE",
      `the tool output folder ${directory} is ${status.isDirectory() ? "owned by another user" : "not a directory (a symbolic link?)"}: remove it and run again`,
      { details: { directory, reason: status.isDirectory() ? "foreign_owner" : "not_a_directory" } },
    );
  }
  if ((status.mode & 0o077) !== 0) {
    await chmod(directory, 0o700);
  }
  return true;
}
