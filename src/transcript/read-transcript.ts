import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { type ExecutionContract, executionContractSchema } from "../contract/execution-contract.js";
import { CharterError } from "../foundation/charter-error.js";
import { isRawPayloadHash, rawPayloadPath, runDirectoryLayout } from "./run-directory-layout.js";
import {
  type TranscriptEntry,
  type TranscriptHeader,
  transcriptFormatVersion,
  transcriptHeaderStringFields,
} from "./transcript-entry.js";
import { findTranscriptEntryShapeProblem } from "./transcript-entry-shape.js";
import { readTranscriptLines } from "./transcript-line-reader.js";

/** A run directory read back, for `charter runs show` and replay. Nothing is verified: see verifyRunDirectory. */
export interface RunRecord {
  readonly runDirectory: string;
  readonly header: TranscriptHeader;
  /** Null when the run stopped before its contract was written. */
  readonly contract: ExecutionContract | null;
  readonly entries: readonly TranscriptEntry[];
  /** True when the transcript ends in a line cut off mid-write (a crash); that line is not in `entries`. */
  readonly incompleteLastLine: boolean;
}

/**
 * Reads a run directory's header, contract and entries. Throws RUN_NOT_FOUND when there is no run there
 * and TRANSCRIPT_INVALID (with the file and line) when a file is not in the format this Charter writes.
 */
export async function readRunDirectory(runDirectory: string): Promise<RunRecord> {
  const headerPath = join(runDirectory, runDirectoryLayout.header);
  const headerText = await readFileOrNull(headerPath);
  if (headerText === null) {
    const exists = await stat(runDirectory).then(
      (status) => status.isDirectory(),
      () => false,
    );
    throw new CharterError(
      "RUN_NOT_FOUND",
      exists
        ? `${runDirectory} holds no ${runDirectoryLayout.header}`
        : `no run directory at ${runDirectory}`,
      { details: { runDirectory } },
    );
  }
  const header = parseHeader(parseJsonFile(headerText, headerPath), headerPath);

  const contractPath = join(runDirectory, runDirectoryLayout.contract);
  const contractText = await readFileOrNull(contractPath);
  let contract: ExecutionContract | null = null;
  if (contractText !== null) {
    const parsed = executionContractSchema.safeParse(parseJsonFile(contractText, contractPath));
    if (!parsed.success) {
      throw invalid(contractPath, null, "the contract does not match the execution contract schema", {
        issues: parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`),
      });
    }
    contract = parsed.data;
  }

  const transcriptPath = join(runDirectory, runDirectoryLayout.transcript);
  const entries: TranscriptEntry[] = [];
  let incompleteLastLine = false;
  try {
    const read = await readTranscriptLines(transcriptPath, (line, lineIndex) => {
      if (line === null) throw invalid(transcriptPath, lineIndex + 1, "the line is not valid UTF-8");
      entries.push(parseEntry(line, transcriptPath, lineIndex + 1));
      return true;
    });
    incompleteLastLine = read.incompleteLastLine !== null;
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code !== "ENOENT") throw error;
  }
  return { runDirectory, header, contract, entries, incompleteLastLine };
}

/** A raw provider payload stored by the run, by the hash an entry's `raw_request_hash`/`raw_response_hash` names. */
export async function readRawPayload(runDirectory: string, hash: string): Promise<unknown> {
  if (!isRawPayloadHash(hash)) {
    throw new CharterError("ARGUMENT_INVALID", `${JSON.stringify(hash)} is not a raw payload hash`, {
      details: { runDirectory, hash },
    });
  }
  const path = rawPayloadPath(runDirectory, hash);
  const text = await readFileOrNull(path);
  if (text === null) throw invalid(path, null, "the raw payload is missing", { hash });
  return parseJsonFile(text, path);
}

function parseHeader(value: unknown, path: string): TranscriptHeader {
  if (typeof value !== "object" || value === null)
    throw invalid(path, null, "the header is not a JSON object");
  const header = value as Record<string, unknown>;
  if (header.v !== transcriptFormatVersion) {
    throw invalid(path, null, `format version ${String(header.v)} is not supported`, {
      version: header.v ?? null,
    });
  }
  for (const field of transcriptHeaderStringFields) {
    if (typeof header[field] !== "string") throw invalid(path, null, `${field} is missing or not a string`);
  }
  return header as unknown as TranscriptHeader;
}

function parseEntry(line: string, path: string, lineNumber: number): TranscriptEntry {
  const value = parseJsonFile(line, path, lineNumber);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalid(path, lineNumber, "the entry is not a JSON object");
  }
  const entry = value as Record<string, unknown>;
  if (entry.v !== transcriptFormatVersion) {
    throw invalid(path, lineNumber, `format version ${String(entry.v)} is not supported`, {
      version: entry.v ?? null,
    });
  }
  const problem = findTranscriptEntryShapeProblem(entry);
  if (problem !== null) throw invalid(path, lineNumber, problem);
  return entry as unknown as TranscriptEntry;
}

function parseJsonFile(text: string, path: string, lineNumber: number | null = null): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalid(path, lineNumber, "not valid JSON", {}, error);
  }
}

function invalid(
  path: string,
  lineNumber: number | null,
  problem: string,
  details: Record<string, unknown> = {},
  cause?: unknown,
): CharterError {
  const where = lineNumber === null ? path : `${path} line ${lineNumber}`;
  return new CharterError("TRANSCRIPT_INVALID", `${where}: ${problem}`, {
    details: { path, line: lineNumber, ...details },
    cause,
  });
}

async function readFileOrNull(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === "ENOENT") return null;
    throw error;
  }
}
