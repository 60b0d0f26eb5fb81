// The JSON shapes of the API the viewer reads, declared here so that the browser code compiles without the
// server's Node types; test/viewer/api-shapes.test.ts holds the server's answers to these declarations.

export type RunStatus = "queued" | "running" | "completed" | "failed" | "interrupted" | "awaiting_approval";

export interface PendingApprovalView {
  readonly turn: number;
  readonly callId: string;
  readonly tool: string;
  readonly arguments: unknown;
}

export interface RunView {
  readonly runId: string;
  readonly kind: string;
  readonly agent: string;
  readonly status: RunStatus;
  readonly statusReason: string | null;
  readonly outcome: string | null;
  readonly errorCode: string | null;
  readonly correlationId: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly finishedAt: string | null;
  readonly turns: number;
  readonly tokens: { readonly input: number; readonly output: number };
  readonly costUsd: number;
  readonly toolsUsed: readonly string[];
  readonly finalReport: unknown;
  readonly chain: { readonly head: string; readonly entries: number };
  readonly lifecycle?: string;
  readonly userId?: string | null;
  readonly metadata?: Record<string, unknown>;
  readonly pendingApprovals?: readonly PendingApprovalView[];
}

export interface RunList {
  readonly runs: readonly RunView[];
  readonly nextCursor: string | null;
}

export interface SessionView {
  readonly tenantId: string | null;
  readonly userId: string | null;
  readonly role: "admin" | "operator" | "viewer";
  readonly permissions: readonly string[];
  readonly readOnly: boolean;
}

export interface TimelineModelCallView {
  readonly turn: number;
  readonly target: string;
  readonly attempt: number;
  readonly status: string;
  readonly latencyMs: number;
  readonly tokens: { readonly input: number; readonly output: number };
  readonly costUsd: number | null;
  readonly errorCode: string | null;
  readonly retry: boolean;
  readonly failover: boolean;
}

export interface TimelineToolCallView {
  readonly turn: number;
  readonly callId: string;
  readonly tool: string;
  readonly arguments: unknown;
  readonly status: string;
  readonly durationMs: number | null;
  readonly resultPreview: string | null;
  readonly errorCode: string | null;
  readonly cacheHit: boolean | null;
}

export interface TimelineView {
  readonly runId: string;
  readonly turns: readonly {
    readonly turn: number;
    readonly modelCalls: readonly TimelineModelCallView[];
    readonly toolCalls: readonly TimelineToolCallView[];
  }[];
}

export interface VerificationView {
  readonly runId: string;
  readonly ok: boolean;
  readonly entries: number;
  readonly headHash: string | null;
  readonly firstBadEntry: {
    readonly seq: number | null;
    readonly stepId: string | null;
    readonly reason: string;
    readonly detail: string;
    readonly record: string | null;
  } | null;
}

export interface ContractView {
  readonly runId: string;
  readonly contractHash: string;
  readonly contract: Record<string, unknown>;
}

export interface StatisticsFiguresView {
  readonly runs: number;
  readonly byStatus: Record<string, number>;
  readonly byAgent: Record<string, number>;
  readonly byProvider: Record<string, number>;
  readonly tokens: { readonly prompt: number; readonly completion: number; readonly total: number };
  readonly costUsd: number;
  readonly cache: { readonly hits: number; readonly misses: number; readonly hitRatio: number | null };
  readonly errorRateByProvider: Record<string, number>;
  readonly durationMs: { readonly average: number | null; readonly p95: number | null };
  readonly failovers: number;
}

export interface StatisticsBucketView extends StatisticsFiguresView {
  readonly from: string;
  readonly to: string;
  readonly requests: number;
  readonly groups?: readonly ({ readonly key: string } & StatisticsFiguresView)[];
}

export interface StatisticsView extends StatisticsFiguresView {
  readonly from: string;
  readonly to: string;
  readonly requests: number;
  readonly requestsPerMinute: number;
  readonly series?: readonly StatisticsBucketView[];
}

export interface ApiErrorBody {
  readonly error: { readonly code: string; readonly class: string; readonly message: string };
}

export interface WorkflowStepView {
  readonly id: string;
  /** Absent for a step the stored run no longer describes (its workflow file changed). */
  readonly kind?: string;
  readonly agent?: string | null;
  readonly tool?: string | null;
  readonly dependsOn?: readonly string[];
  readonly status: string;
  readonly runId: string | null;
  readonly outcome: string | null;
  readonly report: unknown;
  readonly durationMs: number | null;
}

export interface WorkflowRunView {
  readonly runId: string;
  readonly workflowId: string;
  readonly status: string;
  readonly input: unknown;
  readonly steps: readonly WorkflowStepView[];
  readonly errors: readonly {
    readonly stepId: string | null;
    readonly phase: string;
    readonly code: string;
    readonly message: string;
  }[];
  readonly output: unknown;
  readonly accounting: {
    readonly turns: number;
    readonly tokens: { readonly input: number; readonly output: number };
    readonly costUsd: number;
  };
  readonly chain: { readonly head: string; readonly entries: number };
  readonly createdAt: string;
  readonly finishedAt: string | null;
}

export interface WorkflowRunList {
  readonly workflowRuns: readonly WorkflowRunView[];
  readonly nextCursor: string | null;
}

export interface WorkItemFileView {
  readonly path: string;
  readonly change: string;
  readonly hash: string | null;
  readonly diff: string | null;
}

export interface WorkItemReceiptView {
  readonly receiptId: string;
  readonly receiptHash: string;
  readonly status: string;
  readonly error: unknown;
  readonly denialReason: string | null;
  readonly agentId: string;
  readonly contractHash: string | null;
  readonly transcriptHead: string | null;
  readonly commit: string | null;
  readonly files: readonly WorkItemFileView[];
  readonly test: {
    readonly command: string | null;
    /** Absent or null when it was not recorded (an item run by charter work). */
    readonly output?: string | null;
    readonly outputHash?: string | null;
    readonly passed: number | null;
    readonly failed: number | null;
  } | null;
  readonly metrics: unknown;
  readonly createdAt: string;
}

export interface WorkItemRunView {
  readonly runId: string;
  readonly workItemId: string;
  readonly repository: string | null;
  readonly status: string;
  readonly item: unknown;
  readonly createdAt: string;
  readonly finishedAt: string | null;
  readonly receipt: WorkItemReceiptView | null;
}

export interface WorkItemRunList {
  readonly workItemRuns: readonly WorkItemRunView[];
  readonly nextCursor: string | null;
}
