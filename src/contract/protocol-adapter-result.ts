import type { AgentMessage } from "./agent-message.js";

/**
 * What the protocol adapter decided about one provider response (seed 002 §4.2).
 * `native`: well formed as received. `recovered`: repaired (non-strict mode only).
 * `rejected`: not usable; `failure_code` says why.
 */
export type ProtocolAdapterStatus = "native" | "rejected" | "recovered";

export const protocolFailureCodes = [
  "EMPTY_RESPONSE",
  "REASONING_ONLY",
  "MALFORMED_TOOL_ARGUMENTS",
  "TOOL_ARGUMENTS_NOT_OBJECT",
  "MISSING_TOOL_NAME",
  // Arguments nested deeper than the adapter reads (protocol-adapter.ts maxArgumentDepth).
  "TOOL_ARGUMENTS_TOO_DEEP",
] as const;
export type ProtocolFailureCode = (typeof protocolFailureCodes)[number];

/** One tool call the adapter could not accept; its valid siblings still run (seed 000 §4). */
export interface RejectedToolCall {
  readonly id: string;
  readonly name: string;
  readonly raw_arguments: string;
  readonly failure_code: ProtocolFailureCode;
  /** A precise description the model is shown, for example the JSON parse error and its position. */
  readonly detail: string;
}

export interface ProtocolAdapterResult {
  readonly status: ProtocolAdapterStatus;
  readonly canonical_message: AgentMessage | null;
  readonly failure_code: ProtocolFailureCode | null;
  readonly raw_hash: string;
  readonly adapter_version: string;
  readonly rejected_calls: readonly RejectedToolCall[];
  /** Calls whose arguments were repaired (non-strict mode); their ids. */
  readonly recovered_call_ids: readonly string[];
}
