import type { AgentMessage, ToolInvocation } from "../contract/agent-message.js";
import type { ModelToolSpec } from "../model/model-client.js";

/** The request metrics every prepared model request satisfies: expected = ctx + pending + schema (seed 000 §2). */
export interface RequestMetrics {
  readonly ctx_tokens: number;
  readonly pending_ctx_tokens: number;
  readonly schema_ctx_tokens: number;
  readonly expected_tokens: number;
}

/** Work the transition asks the driver to do. Effects are data; the driver performs them and reports events. */
export type SessionEffect =
  | { readonly type: "precheck" }
  | {
      readonly type: "infer";
      readonly turn: number;
      readonly attempt: number;
      readonly targetIndex: number;
      readonly messages: readonly AgentMessage[];
      readonly tools: readonly ModelToolSpec[];
      readonly toolChoice: "auto" | "required" | "none";
      /**
       * The token gate (seed 002 Invariant F): no text of this attempt reaches the user while it streams, since
       * under `tool_policy: required` no free-form text may be emitted before a tool call has executed.
       */
      readonly textHeld: boolean;
      /** The request's canonical hash (model-request-hash.ts): recorded as the INFER entry's `request_hash`. */
      readonly requestHash: string;
      /** Wait this long first: every target is rate-limited (seed 000 §5). */
      readonly waitMilliseconds: number;
      readonly metrics: RequestMetrics;
    }
  | { readonly type: "execute_tools"; readonly turn: number; readonly calls: readonly ToolInvocation[] }
  | { readonly type: "terminate" };
