import type { ToolInvocation } from "../contract/agent-message.js";
import type { ToolManifestEntry } from "../contract/execution-contract.js";
import { contentHash } from "../foundation/content-hash.js";
import type { ToolCallExecutor } from "../session/session-dependencies.js";
import { toolRequestHash } from "../store/tool-request-hash.js";
import type { ToolExecutionResult } from "../tools/tool-execution-result.js";
import { idempotencyClassOf } from "./guard-tool-calls.js";

/** `--live-tools`: the run's tools started again, and which of them count as destructive (configuration). */
export interface LiveTools {
  readonly executor: ToolCallExecutor;
  readonly destructiveTools: readonly string[];
  /** Where the live tools' names lead now: the source each started tool has (kind, server, tool). */
  readonly sourceOf: (name: string) => ToolManifestEntry["source"] | null;
  /**
   * Re-execute every call the record says ran, side effects included: for a replay into a fresh copy of the state
   * the run started from (`charter work replay`), where re-running the writes is the point.
   */
  readonly reExecuteEverything?: boolean;
}

/**
 * Why a call was answered from the record although the tools run live. `source_changed`: the name now leads to
 * another tool (another server, or a different tool of it) than the one the record ran, or to none.
 */
export type NotReExecutedReason =
  | "denied"
  | "not_executed"
  | "destructive"
  | "not_idempotent"
  | "source_changed";

export interface NotReExecutedCall {
  readonly callId: string;
  readonly tool: string;
  readonly turn: number;
  readonly reason: NotReExecutedReason;
}

/** What one side of a tool divergence said: its status, the hash of its content and the content's start. */
export interface ToolAnswer {
  readonly status: string;
  readonly contentHash: string;
  readonly preview: string;
}

/** A call whose live result differs from the recorded one. */
export interface ToolDivergence {
  readonly callId: string;
  readonly tool: string;
  readonly turn: number;
  readonly recorded: ToolAnswer;
  readonly live: ToolAnswer;
}

/** The recorded results of one EXECUTE entry: its `action.calls` and `result.results`. */
export interface RecordedExecution {
  readonly calls: readonly { readonly id: string; readonly name: string; readonly arguments: unknown }[];
  readonly results: readonly ToolExecutionResult[];
}

export type ReplayedToolCalls =
  | { readonly results: ToolExecutionResult[] }
  | {
      readonly missing: {
        readonly callId: string;
        readonly replayedRequestHash: string;
        /** The request hash the record has for that call id, null when it has no such call. */
        readonly recordedRequestHash: string | null;
      };
    };

const previewLength = 120;

/**
 * The results a replayed EXECUTE feeds back, looked up in the recorded EXECUTE entry by (call id, request hash),
 * where the request hash is `toolRequestHash` of the call's tool (its manifest source) and arguments, the key
 * the store's `charter_tool_results.request_hash` holds. The replay runs as many calls as the record has results
 * (the record says where an interrupt or an approval stopped the calls); a call whose key is not in the record
 * is `missing`.
 *
 * With live tools, a call is executed again only when the record says it ran and its tool is read-only or
 * idempotent (the classification resume uses): re-running a side effect is never what a debugging replay is
 * for. Every live result is compared with the recorded one, each difference is kept, and the recorded result
 * is what the replay goes on with, so that the chain check still covers the whole run.
 */
export async function replayToolCalls(
  calls: readonly ToolInvocation[],
  turn: number,
  recorded: RecordedExecution,
  options: {
    readonly manifest: ReadonlyMap<string, ToolManifestEntry>;
    readonly previousTool: string | null;
    readonly live: LiveTools | null;
    readonly toolDivergences: ToolDivergence[];
    readonly notReExecuted: NotReExecutedCall[];
    readonly reExecuted: string[];
  },
): Promise<ReplayedToolCalls> {
  const recordedByKey = new Map<string, ToolExecutionResult>();
  const recordedCalls = new Map(recorded.calls.map((call) => [call.id, call]));
  for (const result of recorded.results) {
    const call = recordedCalls.get(result.call_id);
    if (call !== undefined) recordedByKey.set(keyOf(call.id, requestHashOf(call, options.manifest)), result);
  }
  const destructive = new Set(options.live?.destructiveTools ?? []);
  const results: ToolExecutionResult[] = [];
  let previousTool = options.previousTool;
  for (const call of calls.slice(0, recorded.results.length)) {
    const requestHash = requestHashOf(call, options.manifest);
    const result = recordedByKey.get(keyOf(call.id, requestHash));
    if (result === undefined) {
      const recordedCall = recordedCalls.get(call.id);
      return {
        missing: {
          callId: call.id,
          replayedRequestHash: requestHash,
          recordedRequestHash:
            recordedCall === undefined ? null : requestHashOf(recordedCall, options.manifest),
        },
      };
    }
    if (options.live !== null) {
      const recordedEntry = options.manifest.get(call.name);
      const reason =
        notReExecutedReason(
          result,
          options.live.reExecuteEverything === true
            ? "idempotent"
            : idempotencyClassOf(recordedEntry, destructive),
        ) ?? (sameSource(recordedEntry?.source, options.live.sourceOf(call.name)) ? null : "source_changed");
      if (reason !== null) {
        options.notReExecuted.push({ callId: call.id, tool: call.name, turn, reason });
      } else {
        const live = await options.live.executor(call, {
          signal: new AbortController().signal,
          previousTool,
          turn,
        });
        options.reExecuted.push(call.id);
        // Timings always differ: a live result that says the same as the record is the record.
        if (live.status !== result.status || live.content !== result.content) {
          options.toolDivergences.push({
            callId: call.id,
            tool: call.name,
            turn,
            recorded: answerOf(result),
            live: answerOf(live),
          });
        }
      }
    }
    if (result.executed) previousTool = call.name;
    results.push(result);
  }
  return { results };
}

function sameSource(
  recorded: ToolManifestEntry["source"] | undefined,
  live: ToolManifestEntry["source"] | null,
): boolean {
  return (
    recorded !== undefined &&
    live !== null &&
    recorded.kind === live.kind &&
    recorded.server === live.server &&
    recorded.tool === live.tool
  );
}

function notReExecutedReason(
  result: ToolExecutionResult,
  idempotency: ReturnType<typeof idempotencyClassOf>,
): NotReExecutedReason | null {
  if (result.error_code === "TOOL_CALL_DENIED") return "denied";
  if (!result.executed) return "not_executed";
  if (idempotency === "destructive") return "destructive";
  if (idempotency !== "read_only" && idempotency !== "idempotent") return "not_idempotent";
  return null;
}

/** The call's request as the store keys it: the tool its name resolves to in the manifest, and the arguments. */
function requestHashOf(
  call: { readonly name: string; readonly arguments: unknown },
  manifest: ReadonlyMap<string, ToolManifestEntry>,
): string {
  const source = manifest.get(call.name)?.source;
  return toolRequestHash({
    server: source?.server ?? null,
    tool: source?.tool ?? call.name,
    arguments: call.arguments,
  });
}

function keyOf(callId: string, requestHash: string): string {
  return `${callId}\n${requestHash}`;
}

function answerOf(result: ToolExecutionResult): ToolAnswer {
  return {
    status: result.status,
    contentHash: contentHash(result.content),
    preview:
      result.content.length > previewLength ? `${result.content.slice(0, previewLength)}…` : result.content,
  };
}
