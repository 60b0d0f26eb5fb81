/** Accounting entries with seed 000 §7's field names. Every model attempt and every tool execution is one. */
export interface LlmAccountingEntry {
  readonly type: "llm";
  readonly provider: string;
  readonly model: string;
  readonly status: "ok" | "failed";
  readonly latency: number;
  readonly tokens: {
    readonly input: number;
    readonly output: number;
    readonly reasoning?: number;
    readonly cacheRead?: number;
    readonly cacheWrite?: number;
  };
  readonly timestamp: number;
  readonly agentId: string;
  readonly callPath: string;
  readonly txnId: string;
  readonly turn: number;
  readonly attempt: number;
  readonly errorCode?: string;
  readonly errorClass?: string;
  readonly statusCode?: number;
  /** Set when a price is configured for the provider and model. */
  readonly costUsd?: number;
  /** The transaction of the delegating call, for sub-agent runs (seed 003 delegation). */
  readonly parentTxnId?: string;
  /** The transaction at the root of the delegation chain. */
  readonly originTxnId?: string;
  /** Who the run is for, and the caller's id for what it serves (`--tenant`, `--correlation-id`), when set. */
  readonly tenantId?: string;
  readonly correlationId?: string;
}

export interface ToolAccountingEntry {
  readonly type: "tool";
  readonly mcpServer: string;
  readonly command: string;
  readonly status: "ok" | "failed";
  readonly latency: number;
  readonly timestamp: number;
  readonly charactersIn: number;
  readonly charactersOut: number;
  readonly agentId: string;
  readonly callPath: string;
  readonly txnId: string;
  readonly turn: number;
  readonly callId: string;
  readonly errorCode?: string;
  readonly parentTxnId?: string;
  readonly originTxnId?: string;
  readonly tenantId?: string;
  readonly correlationId?: string;
  /** Whether the result came from the read-only tool cache. */
  readonly cache_hit?: boolean;
}

export type AccountingEntry = LlmAccountingEntry | ToolAccountingEntry;
