import { type FileHandle, mkdir, open } from "node:fs/promises";
import { join } from "node:path";
import { CharterError } from "../foundation/charter-error.js";
import { rawPayloadPath, runDirectoryLayout } from "./run-directory-layout.js";
import type { TranscriptEntry, TranscriptHeader } from "./transcript-entry.js";
import type { TranscriptWriter } from "./transcript-writer.js";

export interface JsonlTranscriptWriterOptions {
  /** fdatasync every file before `flush` resolves, so that a flushed run survives a power loss. */
  readonly durable?: boolean;
}

export interface JsonlTranscriptWriter extends TranscriptWriter {
  readonly runDirectory: string;
}

const directoryMode = 0o700;
const fileMode = 0o600;

/**
 * Persists a transcript as a run directory: `header.json`, `contract.json`, `transcript.jsonl` and
 * `raw/<hash>.json` (see docs/transcript.md). The directory is created 0700 and every file 0600, each file
 * exclusively: a directory that already holds a run is refused rather than appended to.
 *
 * Nothing here blocks: entries are buffered and appended in batches through one file handle, in order,
 * one write at a time, each batch made of whole lines. A crash can therefore cut only the last line,
 * which verification reports. `flush` resolves once every byte handed over so far has been written.
 */
export function createJsonlTranscriptWriter(
  runDirectory: string,
  options: JsonlTranscriptWriterOptions = {},
): JsonlTranscriptWriter {
  const durable = options.durable === true;
  const transcriptPath = join(runDirectory, runDirectoryLayout.transcript);
  let prepared: Promise<FileHandle> | null = null;
  let transcriptHandle: FileHandle | null = null;
  let pendingLines: string[] = [];
  let draining: Promise<void> | null = null;
  const fileWrites = new Set<Promise<void>>();
  const rawHashesWritten = new Set<string>();
  let failure: CharterError | null = null;
  let closed = false;

  // The directory and the transcript file are created by the first operation, whatever it is.
  function prepare(): Promise<FileHandle> {
    prepared ??= (async () => {
      await attempt(runDirectory, "create the run directory", () =>
        mkdir(join(runDirectory, runDirectoryLayout.raw), { recursive: true, mode: directoryMode }),
      );
      transcriptHandle = await attempt(transcriptPath, "create the transcript", () =>
        open(transcriptPath, "ax", fileMode),
      );
      return transcriptHandle;
    })();
    return prepared;
  }

  function accept(): void {
    if (failure !== null) throw failure;
    if (closed) {
      throw new CharterError("INTERNAL_ERROR", "the transcript writer is closed", {
        details: { runDirectory },
      });
    }
  }

  function track(write: Promise<void>): void {
    const tracked = write.catch(recordFailure).finally(() => fileWrites.delete(tracked));
    fileWrites.add(tracked);
  }

  function recordFailure(error: unknown): void {
    failure ??= CharterError.isInstance(error)
      ? error
      : new CharterError("INTERNAL_ERROR", "the transcript could not be written", {
          details: { runDirectory },
          cause: error,
        });
  }

  function writeNewFile(path: string, text: string, alreadyExists: "refuse" | "ignore"): void {
    track(
      (async () => {
        await prepare();
        let handle: FileHandle;
        try {
          handle = await open(path, "wx", fileMode);
        } catch (error) {
          if (isAlreadyExists(error) && alreadyExists === "ignore") return;
          throw toWriteError(error, path, "create");
        }
        try {
          await handle.writeFile(text);
          if (durable) await handle.datasync();
        } catch (error) {
          throw toWriteError(error, path, "write");
        } finally {
          await handle.close();
        }
      })(),
    );
  }

  function startDraining(): void {
    if (draining !== null || failure !== null) return;
    draining = (async () => {
      try {
        const handle = await prepare();
        while (pendingLines.length > 0) {
          const batch = pendingLines;
          pendingLines = [];
          await attempt(transcriptPath, "append to the transcript", () => handle.appendFile(batch.join("")));
        }
      } catch (error) {
        recordFailure(error);
      } finally {
        draining = null;
      }
    })();
  }

  async function flush(): Promise<void> {
    for (;;) {
      if (failure !== null) throw failure;
      if (draining !== null) await draining;
      else if (fileWrites.size > 0) await Promise.all(fileWrites);
      else if (pendingLines.length > 0) startDraining();
      else break;
    }
    if (durable && transcriptHandle !== null) {
      const handle = transcriptHandle;
      await attempt(transcriptPath, "sync the transcript", () => handle.datasync());
    }
  }

  return {
    runDirectory,

    writeHeader(header: TranscriptHeader): void {
      accept();
      writeNewFile(
        join(runDirectory, runDirectoryLayout.header),
        `${JSON.stringify(header, null, 2)}\n`,
        "refuse",
      );
    },

    writeContract(contract: unknown): void {
      accept();
      writeNewFile(
        join(runDirectory, runDirectoryLayout.contract),
        `${JSON.stringify(contract, null, 2)}\n`,
        "refuse",
      );
    },

    appendEntry(_entry: TranscriptEntry, line: string): void {
      accept();
      pendingLines.push(line);
      startDraining();
    },

    writeRaw(hash: string, json: string): void {
      accept();
      if (rawHashesWritten.has(hash)) return;
      rawHashesWritten.add(hash);
      // Content-addressed: a file that already exists holds these very bytes.
      writeNewFile(rawPayloadPath(runDirectory, hash), json, "ignore");
    },

    flush,

    async close(): Promise<void> {
      if (closed) return;
      try {
        await flush();
      } finally {
        closed = true;
        if (prepared !== null) {
          // Waits for the open to settle so that the handle, if any, is always closed.
          await prepared.catch(() => undefined);
        }
        await transcriptHandle?.close();
        transcriptHandle = null;
      }
    },
  };
}

async function attempt<T>(path: string, operation: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw toWriteError(error, path, operation);
  }
}

function toWriteError(error: unknown, path: string, operation: string): CharterError {
  if (CharterError.isInstance(error)) return error;
  if (isAlreadyExists(error)) {
    return new CharterError(
      "ARGUMENT_INVALID",
      `${path} already exists: the run directory already holds a run`,
      {
        details: { path, operation },
        cause: error,
      },
    );
  }
  return new CharterError("INTERNAL_ERROR", `could not ${operation}: ${path}`, {
    details: { path, operation, systemCode: (error as { code?: unknown } | null)?.code ?? null },
    cause: error,
  });
}

function isAlreadyExists(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "EEXIST";
}
