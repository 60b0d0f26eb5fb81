import { isSuccessfulOutcome } from "../contract/agent-outcome.js";
import type { ToolPolicy } from "../contract/execution-contract.js";
import type { AIAgentResult } from "../session/agent-result.js";
import type { TranscriptEntry, TranscriptHeader } from "../transcript/transcript-entry.js";
import { verifyEntries } from "../transcript/verify-transcript.js";
import { executedToolResults } from "./classify-model-behaviour.js";

/** Everything a run left: its result and its whole transcript, as written. */
export interface RecordedConformanceRun {
  readonly result: AIAgentResult;
  readonly header: TranscriptHeader;
  readonly contract: unknown;
  readonly entries: readonly TranscriptEntry[];
  readonly raw: ReadonlyMap<string, string>;
}

const builtinTools = new Set(["final_report", "tool_output"]);
/** One turn of the state machine: attempts, then validation, execution, observation and the commit. */
const turnPattern = /^(INFER )+VALIDATE_CALLS EXECUTE OBSERVE COMMIT $/;

function statesOf(entries: readonly TranscriptEntry[]): string[] {
  return entries.map((entry) => entry.state);
}

/** Checks that every turn walks INFER+ -> VALIDATE_CALLS -> EXECUTE -> OBSERVE -> COMMIT, between one PRECHECK and one TERMINATE. */
function orderingProblems(entries: readonly TranscriptEntry[]): string[] {
  const states = statesOf(entries);
  const problems: string[] = [];
  if (states[0] !== "PRECHECK")
    problems.push(`the transcript starts with ${states[0] ?? "nothing"}, not PRECHECK`);
  if (states.at(-1) !== "TERMINATE")
    problems.push(`the transcript ends with ${states.at(-1) ?? "nothing"}, not TERMINATE`);
  const terminations = states.filter((state) => state === "TERMINATE").length;
  if (terminations !== 1) problems.push(`the transcript has ${terminations} TERMINATE entries, not one`);
  if (states.filter((state) => state === "PRECHECK").length !== 1)
    problems.push("the transcript has more than one PRECHECK");
  let turn = "";
  let turnNumber = -1;
  for (const entry of entries.slice(1, -1)) {
    turn += `${entry.state} `;
    if (entry.state === "INFER" && turn === "INFER ") {
      if (entry.turn <= turnNumber)
        problems.push(`turn ${entry.turn} at seq ${entry.seq} does not follow turn ${turnNumber}`);
      turnNumber = entry.turn;
    } else if (entry.turn !== turnNumber) {
      problems.push(
        `${entry.state} at seq ${entry.seq} belongs to turn ${entry.turn}, inside turn ${turnNumber}`,
      );
    }
    if (entry.state !== "COMMIT") continue;
    if (!turnPattern.test(turn))
      problems.push(
        `turn ${turnNumber} walks ${turn.trim()} instead of INFER+ VALIDATE_CALLS EXECUTE OBSERVE COMMIT`,
      );
    turn = "";
  }
  if (turn !== "") problems.push(`the last turn stops at ${turn.trim()} without a COMMIT`);
  return problems;
}

/** Every executed call was chosen by the VALIDATE_CALLS entry of its turn. */
function validationProblems(entries: readonly TranscriptEntry[]): string[] {
  const problems: string[] = [];
  let chosen = new Set<string>();
  for (const entry of entries) {
    if (entry.state === "VALIDATE_CALLS")
      chosen = new Set((entry.result as { execute?: string[] }).execute ?? []);
    if (entry.state !== "EXECUTE") continue;
    for (const call of (entry.action as { calls?: { id: string; name: string }[] }).calls ?? []) {
      if (!chosen.has(call.id))
        problems.push(`call ${call.id} (${call.name}) executed without passing VALIDATE_CALLS`);
    }
  }
  return problems;
}

/**
 * The transcript invariants every run must keep, whatever the model did: the hash chain verifies (each entry bound
 * to the contract hash), the states come in the machine's order, the result agrees with the TERMINATE entry, a
 * success carries the proof its policy asks for, and nothing runs that the policy forbids. Returns the problems
 * found (empty when none).
 */
export function checkTranscriptInvariants(run: RecordedConformanceRun, toolPolicy: ToolPolicy): string[] {
  const { result, entries } = run;
  const problems: string[] = [];
  const verification = verifyEntries(run.header, run.contract, entries, run.raw);
  if (!verification.ok) {
    const bad = verification.first_bad_entry;
    problems.push(
      `the hash chain does not verify: ${bad?.reason_code ?? "unknown"} at seq ${bad?.seq ?? "?"} (${bad?.detail ?? ""})`,
    );
  }
  if (run.header.contract_hash !== result.contractHash)
    problems.push("the transcript is bound to another contract than the result names");
  problems.push(...orderingProblems(entries), ...validationProblems(entries));
  const last = entries.at(-1);
  const terminal = (last?.result ?? {}) as { outcome?: string };
  if (last?.state === "TERMINATE" && terminal.outcome !== result.outcome)
    problems.push(`the result says ${result.outcome} but the TERMINATE entry says ${terminal.outcome}`);
  if (result.transcript.entries !== entries.length || result.transcript.headHash !== (last?.hash ?? null))
    problems.push("the result's transcript count or head hash does not match the transcript");
  if (result.success !== isSuccessfulOutcome(result.outcome))
    problems.push(`success is ${result.success} for outcome ${result.outcome}`);
  if (result.finalReport === null) problems.push("the run ended without a final report");
  const executedAgentTools = executedToolResults(entries).filter(
    (toolResult) => toolResult.executed && !builtinTools.has(toolResult.tool_name),
  );
  if (toolPolicy === "required" && result.success && executedAgentTools.length === 0)
    problems.push("the run succeeded under a required tool policy without executing a tool");
  if (toolPolicy === "forbidden" && executedAgentTools.length > 0)
    problems.push(
      `tools executed under a forbidden tool policy: ${executedAgentTools.map((tool) => tool.tool_name).join(", ")}`,
    );
  return problems;
}
