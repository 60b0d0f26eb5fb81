import { CharterError } from "../../foundation/charter-error.js";
import { deepFreeze } from "../../foundation/deep-freeze.js";
import type { RegisteredTool, ToolOutput } from "../tool-definition.js";
import type { ToolOutputStore } from "../tool-output-store.js";
import { truncateToBytes } from "../truncate-to-bytes.js";
import {
  defaultToolOutputExtractionLimits,
  extractFromStoredOutput,
  type ToolOutputExtractionLimits,
  type ToolOutputExtractor,
} from "./tool-output-extraction.js";

export interface ToolOutputToolOptions {
  readonly store: ToolOutputStore;
  /** The most lines one read returns. Default 200. */
  readonly maxLines?: number;
  /**
   * The most bytes one answer holds, notes included. Default 8192. Keep it below the contract's
   * `max_bytes_per_call`, or the observation stage will cut the answer short.
   */
  readonly maxBytes?: number;
  /** The most matches one grep returns, whatever the model asks for. Default 200. */
  readonly maxMatches?: number;
  /**
   * Answers `mode: "extract"` questions with child runs over chunks of the output (map, then reduce). Without
   * it, the tool offers only `read` and `grep`.
   */
  readonly extract?: ToolOutputExtractor;
  /** Bounds on one extraction; missing fields take `defaultToolOutputExtractionLimits`. */
  readonly extractionLimits?: Partial<ToolOutputExtractionLimits>;
}

const lineCut = " …[line cut]";
const maxMatchCharacters = 500;

const modeDescriptions = {
  read: "read: return a range of lines.",
  grep: "grep: return the lines containing `pattern`.",
  extract: "extract: answer `question` from the output (a model reads it in chunks).",
} as const;

/** The input schema; `extract` and `question` appear only when extraction is available. */
function inputSchemaFor(extracting: boolean): Record<string, unknown> {
  const modes = extracting ? (["read", "grep", "extract"] as const) : (["read", "grep"] as const);
  return {
    type: "object",
    properties: {
      handle: { type: "string", description: "The handle from a stored-output message, for example out-1." },
      mode: {
        type: "string",
        enum: [...modes],
        description: modes.map((mode) => modeDescriptions[mode]).join(" "),
      },
      start_line: {
        type: "integer",
        minimum: 1,
        description: extracting
          ? "read and extract: first line to use (1-based). Default 1."
          : "read: first line to return (1-based). Default 1.",
      },
      end_line: { type: "integer", minimum: 1, description: "read: last line to return (inclusive)." },
      pattern: {
        type: "string",
        minLength: 1,
        description: "grep: the text to find, matched literally and case-sensitively. Required for grep.",
      },
      max_matches: { type: "integer", minimum: 1, description: "grep: the most matching lines to return." },
      ...(extracting
        ? {
            question: {
              type: "string",
              minLength: 1,
              maxLength: 2000,
              description: "extract: what to find or answer from the output. Required for extract.",
            },
          }
        : {}),
    },
    required: ["handle", "mode"],
    additionalProperties: false,
  };
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

function optionalInteger(input: Readonly<Record<string, unknown>>, key: string): number | undefined {
  const value = input[key];
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new CharterError("TOOL_INPUT_INVALID", `${key} must be a positive integer`, {
      details: { field: key },
    });
  }
  return value;
}

/**
 * The built-in `tool_output` tool: reads or greps an oversized output stored behind a handle (seed 000 §3), or,
 * given an extractor, answers a question about it with bounded child runs over its chunks. Its answers are
 * bounded in lines and bytes, and say when they are, and where to continue.
 */
export function createToolOutputTool(options: ToolOutputToolOptions): RegisteredTool {
  const { store, extract: extractor } = options;
  const maxLines = options.maxLines ?? 200;
  const maxBytes = options.maxBytes ?? 8192;
  const matchCap = options.maxMatches ?? 200;
  const limits: ToolOutputExtractionLimits = {
    maxChunks: options.extractionLimits?.maxChunks ?? defaultToolOutputExtractionLimits.maxChunks,
    chunkBytes: options.extractionLimits?.chunkBytes ?? defaultToolOutputExtractionLimits.chunkBytes,
    concurrency: options.extractionLimits?.concurrency ?? defaultToolOutputExtractionLimits.concurrency,
  };
  for (const [limit, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new CharterError("CONFIGURATION_INVALID", `tool_output: ${limit} must be a positive integer`, {
        details: { limit, value },
      });
    }
  }

  /** Adds lines while they fit in the byte budget left for the body; a first line too long alone is cut. */
  function fitLines(lines: readonly string[], budget: number): string[] {
    const kept: string[] = [];
    let used = 0;
    for (const line of lines) {
      const size = byteLength(line) + 1;
      if (used + size > budget) {
        if (kept.length === 0) kept.push(truncateToBytes(line, Math.max(0, budget - 1), lineCut));
        break;
      }
      kept.push(line);
      used += size;
    }
    return kept;
  }

  async function read(handle: string, input: Readonly<Record<string, unknown>>): Promise<string> {
    const startLine = optionalInteger(input, "start_line") ?? 1;
    const requestedEnd = optionalInteger(input, "end_line");
    const endLine = Math.min(requestedEnd ?? Number.MAX_SAFE_INTEGER, startLine + maxLines - 1);
    const range = await store.read(handle, { startLine, endLine });
    if (range.lines.length === 0) {
      return `[${handle}: no lines from ${startLine}; the output has ${range.totalLines} lines]`;
    }
    // Room for the header and the continuation note, whose lengths are bounded by the line numbers.
    const reserve = 160 + handle.length;
    const lines = fitLines(range.lines, maxBytes - reserve);
    const last = range.startLine + lines.length - 1;
    const header = `[${handle}: lines ${range.startLine}-${last} of ${range.totalLines}]`;
    const wanted = Math.min(requestedEnd ?? range.totalLines, range.totalLines);
    const more =
      last < wanted
        ? `\n[truncated: lines ${last + 1}-${wanted} not shown; call tool_output with start_line=${last + 1} to continue]`
        : "";
    return `${header}\n${lines.join("\n")}${more}`;
  }

  async function grep(handle: string, input: Readonly<Record<string, unknown>>): Promise<string> {
    const pattern = input.pattern;
    if (typeof pattern !== "string" || pattern === "") {
      throw new CharterError("TOOL_INPUT_INVALID", "grep needs a non-empty pattern", {
        details: { field: "pattern" },
      });
    }
    const maxMatches = Math.min(optionalInteger(input, "max_matches") ?? 50, matchCap);
    const found = await store.grep(handle, pattern, { maxMatches });
    const header = `[${handle}: ${found.totalMatches} of ${found.totalLines} lines contain ${JSON.stringify(pattern)}]`;
    const reserve = 200 + byteLength(header);
    const rows = fitLines(
      found.matches.map(
        (match) => `${match.line}: ${truncateToBytes(match.text, maxMatchCharacters, lineCut)}`,
      ),
      maxBytes - reserve,
    );
    const more =
      rows.length < found.totalMatches
        ? `\n[truncated: showing ${rows.length} of ${found.totalMatches} matches; narrow the pattern or read a line range]`
        : "";
    return `${header}${rows.length > 0 ? `\n${rows.join("\n")}` : ""}${more}`;
  }

  async function extract(
    handle: string,
    input: Readonly<Record<string, unknown>>,
    signal: AbortSignal,
    answerWith: ToolOutputExtractor,
  ): Promise<ToolOutput> {
    const question = input.question;
    if (typeof question !== "string" || question.trim() === "") {
      throw new CharterError("TOOL_INPUT_INVALID", "extract needs a non-empty question", {
        details: { field: "question" },
      });
    }
    const startLine = optionalInteger(input, "start_line") ?? 1;
    const result = await extractFromStoredOutput({
      store,
      handle,
      question,
      startLine,
      extractor: answerWith,
      limits,
      signal,
    });
    if (!result.ok) {
      return { text: `extraction failed: ${result.reason}`, isError: true, accounting: result.accounting };
    }
    if (result.chunkCount === 0) {
      return {
        text: `[${handle}: no lines from ${startLine}; the output has ${result.totalLines} lines]`,
        isError: false,
      };
    }
    const header = `[${handle}: answer from lines ${result.firstLine}-${result.coveredThrough} of ${result.totalLines}]`;
    const more =
      result.coveredThrough < result.totalLines
        ? `\n[not examined: lines ${result.coveredThrough + 1}-${result.totalLines}; call tool_output with mode "extract" and start_line=${result.coveredThrough + 1} to continue]`
        : "";
    const room = Math.max(0, maxBytes - byteLength(header) - byteLength(more) - 1);
    const answer = truncateToBytes(result.answer, room, " …[answer cut]");
    return { text: `${header}\n${answer}${more}`, isError: false, accounting: result.accounting };
  }

  const modes = extractor === undefined ? "'read' or 'grep'" : "'read', 'grep' or 'extract'";
  return {
    manifest: deepFreeze({
      name: "tool_output",
      description:
        extractor === undefined
          ? "Reads a tool output that was too large to show and was stored behind a handle: a range of lines, or the lines containing a text."
          : "Reads a tool output that was too large to show and was stored behind a handle: a range of lines, the lines containing a text, or an answer to a question about it.",
      input_schema: inputSchemaFor(extractor !== undefined),
      source: { kind: "builtin" as const, server: null, tool: "tool_output" },
      annotations: { readOnlyHint: true },
    }),
    async execute(input, context) {
      const handle = input.handle;
      if (typeof handle !== "string") {
        throw new CharterError("TOOL_INPUT_INVALID", "handle must be a string", {
          details: { field: "handle" },
        });
      }
      if (input.mode === "read") return { text: await read(handle, input), isError: false };
      if (input.mode === "grep") return { text: await grep(handle, input), isError: false };
      if (input.mode === "extract" && extractor !== undefined) {
        return extract(handle, input, context.signal, extractor);
      }
      throw new CharterError("TOOL_INPUT_INVALID", `mode must be ${modes}`, {
        details: { field: "mode" },
      });
    },
  };
}
