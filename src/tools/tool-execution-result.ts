import type { ContentAttachment } from "../contract/agent-message.js";
import { deepFreeze } from "../foundation/deep-freeze.js";
import type { ErrorCode } from "../foundation/error-codes.js";
import type { ToolBinaryResource, ToolQuestion } from "./tool-definition.js";

/** An image or audio clip whose bytes the session has not stored yet (it then becomes a `ContentAttachment`). */
export interface UnstoredAttachment {
  readonly type: "image" | "audio";
  readonly media_type: string;
  readonly bytes: number;
  /** Base64. */
  readonly data: string;
}

export type ToolResultAttachment = ContentAttachment | UnstoredAttachment;

/**
 * The frozen result of one tool call (seed 003 INV-TOOL-002). Failures are data: `status` and `error_code`
 * say what happened and `content` is exactly what the model is shown, e.g. `(tool failed: timeout)`.
 */
export type ToolResultStatus = "ok" | "failed" | "dropped";

export interface ToolExecutionResult {
  readonly call_id: string;
  readonly tool_name: string;
  readonly status: ToolResultStatus;
  readonly error_code: ErrorCode | null;
  /** What the model sees in the tool message. */
  readonly content: string;
  /** True when the tool actually ran (validated and executed), whatever its outcome. */
  readonly executed: boolean;
  readonly latency_ms: number;
  readonly characters_in: number;
  readonly characters_out: number;
  /** Set when the output was stored behind a handle (seed 000 §3). */
  readonly handle: string | null;
  readonly source: { readonly kind: string; readonly server: string | null; readonly tool: string };
  /** Accounting entries of work done on the tool's behalf (a child run's model calls); absent when none. */
  readonly accounting?: readonly unknown[];
  /** For cacheable read-only tools: whether the result came from the cache. */
  readonly cache_hit?: boolean;
  /**
   * Images and audio the tool returned. The session stores their bytes as raw payloads and keeps only their
   * hashes here; absent when none.
   */
  readonly attachments?: readonly ToolResultAttachment[];
  /** Binary resources not yet stored behind handles (the observation stage stores them); absent when none. */
  readonly binary_resources?: readonly ToolBinaryResource[];
  /** With `APPROVAL_REQUIRED`: the question the tool's server asked (the run stops until it is answered). */
  readonly question?: ToolQuestion;
}

/** The result's fields in sorted key order, `accounting` aside. */
function sortedFields(result: ToolExecutionResult) {
  return {
    ...(result.attachments !== undefined && result.attachments.length > 0
      ? { attachments: deepFreeze(result.attachments.map((attachment) => ({ ...attachment }))) }
      : {}),
    ...(result.binary_resources !== undefined && result.binary_resources.length > 0
      ? { binary_resources: deepFreeze(result.binary_resources.map((resource) => ({ ...resource }))) }
      : {}),
    ...(result.cache_hit !== undefined ? { cache_hit: result.cache_hit } : {}),
    call_id: result.call_id,
    characters_in: result.characters_in,
    characters_out: result.characters_out,
    content: result.content,
    error_code: result.error_code,
    executed: result.executed,
    handle: result.handle,
    latency_ms: result.latency_ms,
    ...(result.question !== undefined ? { question: deepFreeze({ ...result.question }) } : {}),
    source: Object.freeze({
      kind: result.source.kind,
      server: result.source.server,
      tool: result.source.tool,
    }),
    status: result.status,
    tool_name: result.tool_name,
  };
}

/** Freezes a result, with its keys in sorted order so that hashing it takes canonical JSON's fast path. */
export function freezeToolResult(result: ToolExecutionResult): ToolExecutionResult {
  const accounting = result.accounting;
  if (accounting === undefined || accounting.length === 0) return Object.freeze(sortedFields(result));
  // `accounting` sorts first; only results of tools that ran child work carry it.
  return Object.freeze({ accounting: deepFreeze([...accounting]), ...sortedFields(result) });
}
