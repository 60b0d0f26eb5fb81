import { CharterError } from "../../foundation/charter-error.js";
import { describeError } from "../describe-error.js";
import type { ToolOutputStore } from "../tool-output-store.js";
import { truncateToBytes } from "../truncate-to-bytes.js";
import { chunkLines, type OutputChunk } from "./chunk-lines.js";

/**
 * One step of an extraction, for the hook to answer with a bounded child run (a model call with no tools).
 * - `map`: answer `question` from `chunks[0]`, one chunk of the stored output (`chunk` says which); when the
 *   chunk holds nothing relevant, say so briefly.
 * - `reduce`: combine `chunks`, the map steps' answers in chunk order, into one answer to `question`.
 */
export interface ToolOutputExtractionRequest {
  readonly phase: "map" | "reduce";
  readonly question: string;
  readonly chunks: readonly string[];
  /** Map steps: the chunk's position (1-based, of `count`) and the output lines it holds. `null` for reduce. */
  readonly chunk: {
    readonly index: number;
    readonly count: number;
    readonly firstLine: number;
    readonly lastLine: number;
  } | null;
  /** The stored output's handle, for the child run's records. */
  readonly handle: string;
  /** Aborts when the call times out or the run is interrupted: the child run must stop. */
  readonly signal: AbortSignal;
}

export interface ToolOutputExtractionAnswer {
  readonly answer: string;
  /** The child run's accounting entries (its model calls, with their cost); they join the run's accounting. */
  readonly accounting: readonly unknown[];
}

/** The extension point the runner wires to a child session; the orchestration around it is Charter's. */
export type ToolOutputExtractor = (
  request: ToolOutputExtractionRequest,
) => Promise<ToolOutputExtractionAnswer>;

/** Bounds on one extraction: how much of the output a call examines, and how many child runs it makes. */
export interface ToolOutputExtractionLimits {
  /** The most chunks one call examines (one map step each, plus one reduce step when there are several). */
  readonly maxChunks: number;
  /** The most UTF-8 bytes in one chunk, and in the reduce step's combined input. */
  readonly chunkBytes: number;
  /** How many map steps run at once. */
  readonly concurrency: number;
}

export const defaultToolOutputExtractionLimits: ToolOutputExtractionLimits = Object.freeze({
  maxChunks: 8,
  chunkBytes: 16_384,
  concurrency: 4,
});

export type ToolOutputExtractionResult =
  | {
      readonly ok: true;
      readonly answer: string;
      readonly firstLine: number;
      readonly coveredThrough: number;
      readonly totalLines: number;
      readonly chunkCount: number;
      readonly accounting: readonly unknown[];
    }
  | { readonly ok: false; readonly reason: string; readonly accounting: readonly unknown[] };

const answerCut = " …[answer cut]";

function checkedAnswer(value: unknown): ToolOutputExtractionAnswer {
  const candidate = value as Partial<ToolOutputExtractionAnswer> | null;
  if (typeof candidate?.answer !== "string" || !Array.isArray(candidate.accounting)) {
    throw new CharterError("TOOL_RESULT_INVALID", "the extraction hook returned no { answer, accounting }");
  }
  return candidate as ToolOutputExtractionAnswer;
}

/** Runs the map steps, at most `concurrency` at a time; answers and accounting stay in chunk order. */
async function mapChunks(
  chunks: readonly OutputChunk[],
  ask: (chunk: OutputChunk, index: number) => Promise<ToolOutputExtractionAnswer>,
  concurrency: number,
  signal: AbortSignal,
): Promise<{ answers: (ToolOutputExtractionAnswer | null)[]; failure: unknown }> {
  const answers: (ToolOutputExtractionAnswer | null)[] = chunks.map(() => null);
  let next = 0;
  let failure: unknown = null;
  const worker = async () => {
    while (failure === null && !signal.aborted && next < chunks.length) {
      const index = next++;
      try {
        answers[index] = checkedAnswer(await ask(chunks[index] as OutputChunk, index));
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, chunks.length)) }, worker));
  return { answers, failure };
}

/**
 * Answers `question` from a stored output with the extractor: the lines from `startLine` are cut into at most
 * `maxChunks` chunks, each chunk is asked the question (map), and the partial answers are combined (reduce;
 * skipped for a single chunk). Never throws for the extractor's failures: they come back with the accounting
 * of the steps that did run, so that their cost is never lost.
 */
export async function extractFromStoredOutput(options: {
  readonly store: ToolOutputStore;
  readonly handle: string;
  readonly question: string;
  readonly startLine: number;
  readonly extractor: ToolOutputExtractor;
  readonly limits: ToolOutputExtractionLimits;
  readonly signal: AbortSignal;
}): Promise<ToolOutputExtractionResult> {
  const { handle, question, limits, signal, extractor } = options;
  const range = await options.store.read(handle, { startLine: options.startLine });
  const { chunks, coveredThrough } = chunkLines(range.lines, range.startLine, limits);
  const accounting: unknown[] = [];
  const failed = (error: unknown): ToolOutputExtractionResult => ({
    ok: false,
    reason: describeError(error),
    accounting,
  });

  const mapped = await mapChunks(
    chunks,
    (chunk, index) =>
      extractor({
        phase: "map",
        question,
        chunks: [chunk.text],
        chunk: {
          index: index + 1,
          count: chunks.length,
          firstLine: chunk.firstLine,
          lastLine: chunk.lastLine,
        },
        handle,
        signal,
      }),
    limits.concurrency,
    signal,
  );
  for (const answer of mapped.answers) if (answer !== null) accounting.push(...answer.accounting);
  if (mapped.failure !== null) return failed(mapped.failure);
  if (signal.aborted) return failed(new CharterError("INTERRUPTED", "the extraction was interrupted"));

  const partials = mapped.answers.map((answer) => (answer as ToolOutputExtractionAnswer).answer);
  let answer = partials[0] ?? "";
  if (partials.length > 1) {
    // The reduce step's input is bounded like a chunk: each partial answer gets an equal share.
    const share = Math.max(1, Math.floor(limits.chunkBytes / partials.length));
    try {
      const reduced = checkedAnswer(
        await extractor({
          phase: "reduce",
          question,
          chunks: partials.map((partial) => truncateToBytes(partial, share, answerCut)),
          chunk: null,
          handle,
          signal,
        }),
      );
      accounting.push(...reduced.accounting);
      answer = reduced.answer;
    } catch (error) {
      return failed(error);
    }
  }
  return {
    ok: true,
    answer,
    firstLine: range.startLine,
    coveredThrough,
    totalLines: range.totalLines,
    chunkCount: chunks.length,
    accounting,
  };
}
