import type { RunRequestRecord } from "../../store/run-event-records.js";
import type { StoredWorkReceipt } from "../../store/run-store.js";
import type { WorkReceipt } from "../../work/work-receipt.js";
import type { ServerPendingApproval } from "../execution/pending-approvals-of.js";
import { serverPendingApprovalsSchema } from "./pending-approvals-schema.js";
import { requestFields } from "./run-view.js";

/**
 * What a work item run executed by the server records beside its receipt (in its last lifecycle event): each
 * touched file's diff and the test command's output, which the receipt names only by hash.
 */
export interface WorkItemRunRecord {
  /** Unified diffs (git's), by repository-relative path. */
  readonly diffs: Readonly<Record<string, string>>;
  readonly testOutput: string | null;
}

/** What the server keeps of a work item run it accepted (see WorkItemRunRequest). */
interface AcceptedWorkItem {
  readonly repository?: string;
  readonly item?: { readonly id?: unknown };
  readonly correlationId?: string;
}

type FileChange = "created" | "modified" | "deleted";

function filesOf(receipt: WorkReceipt, record: WorkItemRunRecord | null) {
  const files: { path: string; change: FileChange; hash: string | null; diff: string | null }[] = [];
  const add = (paths: readonly string[], change: FileChange) => {
    for (const path of paths) {
      files.push({
        path,
        change,
        hash: receipt.artifact_hashes[path] ?? null,
        diff: record?.diffs[path] ?? null,
      });
    }
  };
  add(receipt.created_files, "created");
  add(receipt.modified_files, "modified");
  add(receipt.deleted_files, "deleted");
  return files.sort((left, right) => left.path.localeCompare(right.path));
}

/** The receipt as the API shows it: camel-cased, each file with its change and diff, the test and its output. */
function receiptView(stored: StoredWorkReceipt, record: WorkItemRunRecord | null) {
  const receipt = stored.receipt as WorkReceipt;
  const item = receipt.work_item as { test_command?: unknown } | null;
  const command = typeof item?.test_command === "string" ? item.test_command : null;
  return {
    receiptId: receipt.receipt_id,
    receiptHash: receipt.receipt_hash,
    previousReceiptHash: receipt.previous_receipt_hash,
    status: receipt.status,
    error: receipt.error,
    denialReason: receipt.denial_reason,
    agentId: receipt.agent_id,
    workItemHash: receipt.work_item_hash,
    contractHash: receipt.contract_hash,
    transcriptHead: receipt.transcript_head,
    beforeHash: receipt.before_hash,
    afterHash: receipt.after_hash,
    outputHash: receipt.output_hash,
    beforeCommit: receipt.before_commit,
    afterCommit: receipt.after_commit,
    commit: receipt.commit,
    files: filesOf(receipt, record),
    test:
      command === null
        ? null
        : {
            command,
            output: record?.testOutput ?? null,
            outputHash: receipt.test_output_hash,
            passed: receipt.metrics.tests_passed ?? null,
            failed: receipt.metrics.tests_failed ?? null,
          },
    metrics: receipt.metrics,
    createdAt: receipt.created_at,
  };
}

/**
 * A work item run as `GET /v1/work-items/runs/:id` (and each item of the list) shows it: the item, where it stands
 * and, once it ended, its receipt. `runId` is the item's run (its agent's run, `GET /v1/runs/:id`).
 */
export function workItemRunView(
  runId: string,
  receipt: StoredWorkReceipt | null,
  accepted: RunRequestRecord | null,
  record: WorkItemRunRecord | null,
  running: boolean,
  /** The calls the item's agent waits on a person for (only while its lifecycle is at AWAITING_APPROVAL). */
  pendingApprovals: readonly ServerPendingApproval[] = [],
) {
  const asked = (accepted?.request ?? {}) as AcceptedWorkItem;
  const document = receipt?.receipt as WorkReceipt | undefined;
  const item = document?.work_item ?? asked.item ?? null;
  const createdAt = accepted?.createdAt ?? receipt?.createdAt ?? 0;
  return {
    ...requestFields(accepted),
    runId,
    workItemId: receipt?.workItemId ?? (typeof asked.item?.id === "string" ? asked.item.id : ""),
    // The server's name for the repository (never its path) for an item it ran; the path for one run by `charter work`.
    repository: asked.repository ?? receipt?.repository ?? null,
    status:
      receipt?.status ??
      (accepted?.state === "AWAITING_APPROVAL"
        ? "awaiting_approval"
        : running
          ? "running"
          : accepted?.state === "FAILED"
            ? "failure"
            : "queued"),
    ...(receipt === null && accepted?.state === "AWAITING_APPROVAL" ? { pendingApprovals } : {}),
    item: item as unknown,
    correlationId: asked.correlationId ?? null,
    createdAt: new Date(createdAt).toISOString(),
    finishedAt: receipt === null ? null : new Date(receipt.createdAt).toISOString(),
    receipt: receipt === null ? null : receiptView(receipt, record),
  };
}

/** The JSON schema of `workItemRunView` (the OpenAPI document's `WorkItemRun`). */
export const workItemRunSchema = {
  $id: "WorkItemRun",
  type: "object",
  required: ["runId", "workItemId", "status", "item", "createdAt", "receipt"],
  properties: {
    runId: { type: "string", description: "The item's run: its agent's run (GET /v1/runs/:id)." },
    workItemId: { type: "string" },
    repository: { type: ["string", "null"] },
    status: {
      type: "string",
      enum: ["queued", "running", "awaiting_approval", "success", "failure", "denied", "timeout", "conflict"],
      description:
        "queued or running until it ends (awaiting_approval while its agent waits on a person's decision: pendingApprovals); then the receipt's status.",
    },
    pendingApprovals: serverPendingApprovalsSchema,
    lifecycle: {
      type: "string",
      enum: ["REQUESTED", "ROUTED", "EXECUTING", "TOOL_CALL", "AWAITING_APPROVAL", "COMPLETED", "FAILED"],
    },
    requestId: { type: ["string", "null"] },
    userId: { type: ["string", "null"] },
    conversationId: { type: ["string", "null"] },
    metadata: { type: "object", additionalProperties: true },
    item: { description: "The work item (with its defaults once it ran)." },
    correlationId: { type: ["string", "null"] },
    createdAt: { type: "string", format: "date-time" },
    finishedAt: { type: ["string", "null"], format: "date-time" },
    receipt: {
      type: ["object", "null"],
      description: "What the item did, once it ended (null before).",
      properties: {
        receiptId: { type: "string" },
        receiptHash: { type: "string" },
        previousReceiptHash: { type: ["string", "null"] },
        status: { type: "string" },
        error: { type: ["string", "null"] },
        denialReason: { type: ["string", "null"] },
        agentId: { type: "string" },
        workItemHash: { type: "string" },
        contractHash: { type: ["string", "null"] },
        transcriptHead: { type: ["string", "null"] },
        beforeHash: { type: "string" },
        afterHash: { type: ["string", "null"] },
        outputHash: { type: "string" },
        beforeCommit: { type: "string" },
        afterCommit: { type: ["string", "null"] },
        commit: { type: ["string", "null"], description: "The commit the admitted change became." },
        files: {
          type: "array",
          items: {
            type: "object",
            required: ["path", "change", "hash", "diff"],
            properties: {
              path: { type: "string", description: "Relative to the repository's top folder." },
              change: { type: "string", enum: ["created", "modified", "deleted"] },
              hash: { type: ["string", "null"] },
              diff: {
                type: ["string", "null"],
                description:
                  "The change as a unified diff (null when not recorded: an item run by `charter work`).",
              },
            },
          },
        },
        test: {
          type: ["object", "null"],
          properties: {
            command: { type: "string" },
            output: { type: ["string", "null"] },
            outputHash: { type: ["string", "null"] },
            passed: { type: ["integer", "null"] },
            failed: { type: ["integer", "null"] },
          },
        },
        metrics: { type: "object", additionalProperties: true },
        createdAt: { type: "string" },
      },
    },
  },
} as const;
