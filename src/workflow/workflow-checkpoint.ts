import { z } from "zod";
import { canonicalJson } from "../foundation/canonical-json.js";
import { CharterError } from "../foundation/charter-error.js";
import { stepStatuses } from "./workflow-status.js";

/** The version of the workflow checkpoint document this Charter writes and reads. */
export const workflowCheckpointVersion = 1;

const json = z.json();
const error = z.object({ code: z.string(), message: z.string() }).strict();

/** What came of a step (or its compensation): the run that did it, how it ended, its error. */
const stepRecordSchema = z
  .object({
    status: z.enum(stepStatuses),
    /** The agent run of the step (its own stored run); null for a tool step or a step not started. */
    runId: z.string().nullable(),
    /** The run's outcome (`COMPLETED_WITH_TOOLS`...), or a tool step's result status (`ok`, `failed`). */
    outcome: z.string().nullable(),
    error: error.nullable(),
    /** Milliseconds since the epoch. */
    startedAt: z.number().nullable(),
    endedAt: z.number().nullable(),
    /** A tool step's call id (`<workflow-run>/<step>`): the same call when it runs again after a crash. */
    callId: z.string().nullable(),
    compensation: z
      .object({
        runId: z.string().nullable(),
        callId: z.string().nullable(),
        outcome: z.string().nullable(),
        error: error.nullable(),
      })
      .strict()
      .nullable(),
  })
  .strict();

/** A completed step's output: its report as text, and the JSON value it holds when it is JSON. */
const stepOutputSchema = z.object({ report: z.string(), json: json.optional() }).strict();

const totalsSchema = z
  .object({
    turns: z.int().nonnegative(),
    tokensIn: z.number().nonnegative(),
    tokensOut: z.number().nonnegative(),
    costUsd: z.number().nonnegative(),
    toolsUsed: z.array(z.string()),
  })
  .strict();

/**
 * A workflow checkpoint (version 1), committed in the same transaction as each step's start and end (and each
 * compensation's): everything a resume needs, from this document alone.
 *
 * - `stepIndex`, `completedStepId`: the array index and id of the step that completed last (-1 and null before
 *   any); with steps run one at a time, a resume continues at `stepIndex + 1`.
 * - `stepOutputs`: every completed step's output, restored on resume, never recomputed.
 * - `context`: the workflow's input and its memory (what `saveAs` kept); `memorySnapshot`: the memory as of this
 *   checkpoint (the same value, kept under the name resumes read it by).
 * - `scheduler`: each step's status, the order steps completed in, whether a failure stops the workflow and, under
 *   rollback, the compensations still to run; `steps`: each step's run, outcome, error and times.
 */
export const workflowCheckpointSchema = z
  .object({
    v: z.literal(workflowCheckpointVersion),
    kind: z.literal("workflow"),
    stepIndex: z.int().min(-1),
    completedStepId: z.string().nullable(),
    stepOutputs: z.record(z.string(), stepOutputSchema),
    context: z.object({ input: json, memory: z.record(z.string(), json) }).strict(),
    memorySnapshot: z.record(z.string(), json),
    scheduler: z
      .object({
        statuses: z.record(z.string(), z.enum(stepStatuses)),
        completionOrder: z.array(z.string()),
        failing: z.boolean(),
        compensationQueue: z.array(z.string()).nullable(),
      })
      .strict(),
    steps: z.record(z.string(), stepRecordSchema),
    totals: totalsSchema,
  })
  .strict();

export type WorkflowCheckpoint = z.infer<typeof workflowCheckpointSchema>;
export type WorkflowStepRecord = z.infer<typeof stepRecordSchema>;
export type WorkflowStepOutput = z.infer<typeof stepOutputSchema>;
export type WorkflowTotals = z.infer<typeof totalsSchema>;

/**
 * Checks a checkpoint against its schema (before it is saved, and when it is loaded), and that it holds together:
 * every step has a status and a record, every completed step an output and no other step one, the memory snapshot
 * is the context's memory. Throws WORKFLOW_CHECKPOINT_INVALID naming the key at fault.
 */
export function parseWorkflowCheckpoint(
  value: unknown,
  stepIds: readonly string[],
  where: { readonly runId: string; readonly seq: number | null },
): WorkflowCheckpoint {
  const parsed = workflowCheckpointSchema.safeParse(value);
  const invalid = (key: string, problem: string) =>
    new CharterError(
      "WORKFLOW_CHECKPOINT_INVALID",
      `the checkpoint of workflow run ${where.runId}${where.seq === null ? "" : ` at entry ${where.seq}`} is not valid: ${key}: ${problem}`,
      { details: { runId: where.runId, seq: where.seq, key, problem } },
    );
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(issue?.path.map(String).join(".") || "(document)", issue?.message ?? "invalid");
  }
  const checkpoint = parsed.data;
  for (const id of stepIds) {
    const status = checkpoint.scheduler.statuses[id];
    if (status === undefined) throw invalid(`scheduler.statuses.${id}`, "the step has no status");
    if (checkpoint.steps[id] === undefined) throw invalid(`steps.${id}`, "the step has no record");
    const completed =
      status === "completed" ||
      status === "compensating" ||
      status === "compensated" ||
      status === "compensation_failed";
    if (completed !== (checkpoint.stepOutputs[id] !== undefined))
      throw invalid(
        `stepOutputs.${id}`,
        completed ? "a completed step has no output" : "a step that did not complete has an output",
      );
  }
  const known = new Set(stepIds);
  for (const id of [
    ...Object.keys(checkpoint.scheduler.statuses),
    ...Object.keys(checkpoint.steps),
    ...Object.keys(checkpoint.stepOutputs),
  ]) {
    if (!known.has(id)) throw invalid(`steps.${id}`, "the workflow has no such step");
  }
  if (checkpoint.completedStepId !== null && stepIds[checkpoint.stepIndex] !== checkpoint.completedStepId)
    throw invalid("stepIndex", `step ${checkpoint.stepIndex} is not ${checkpoint.completedStepId}`);
  if (canonicalJson(checkpoint.memorySnapshot) !== canonicalJson(checkpoint.context.memory))
    throw invalid("memorySnapshot", "the memory snapshot is not the context's memory");
  return checkpoint;
}
