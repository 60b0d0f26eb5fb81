import type { Kysely } from "kysely";
import type { RunStore, StoredWorkReceipt } from "./run-store.js";
import type { StoreDatabase, WorkReceiptsTable } from "./store-database.js";
import { storeError } from "./store-errors.js";
import type { StoreGuard } from "./store-guard.js";
import { storeRecordVersion } from "./store-record-version.js";

export type WorkReceiptAccess = Pick<RunStore, "putWorkReceipt" | "getWorkReceipt" | "listWorkReceipts">;

function fromRow(row: WorkReceiptsTable): StoredWorkReceipt {
  return {
    receiptId: row.receipt_id,
    runId: row.run_id,
    workItemId: row.work_item_id,
    repository: row.repository,
    status: row.status,
    receiptHash: row.receipt_hash,
    receipt: JSON.parse(row.receipt_json) as unknown,
    createdAt: Number(row.created_at),
    tenantId: row.tenant_id,
  };
}

/** Work item receipts, every query scoped by the store's tenant. */
export function createWorkReceiptAccess(
  database: Kysely<StoreDatabase>,
  guard: StoreGuard,
  tenantId: string | null,
): WorkReceiptAccess {
  return {
    putWorkReceipt: (receipt) =>
      guard("putWorkReceipt", { receiptId: receipt.receiptId }, async () => {
        const existing = await database
          .selectFrom("charter_work_receipts")
          .select("receipt_id")
          .where("receipt_id", "=", receipt.receiptId)
          .executeTakeFirst();
        if (existing !== undefined) {
          throw storeError(
            "duplicate_record",
            "a receipt with this id is already stored: receipts are never rewritten",
            {
              receiptId: receipt.receiptId,
            },
          );
        }
        await database
          .insertInto("charter_work_receipts")
          .values({
            receipt_id: receipt.receiptId,
            v: storeRecordVersion,
            tenant_id: tenantId,
            run_id: receipt.runId,
            work_item_id: receipt.workItemId,
            repository: receipt.repository,
            status: receipt.status,
            receipt_hash: receipt.receiptHash,
            receipt_json: JSON.stringify(receipt.receipt),
            created_at: receipt.createdAt,
          })
          .execute();
      }),

    getWorkReceipt: (receiptId) =>
      guard("getWorkReceipt", { receiptId }, async () => {
        const row = await database
          .selectFrom("charter_work_receipts")
          .selectAll()
          .where("receipt_id", "=", receiptId)
          .where("tenant_id", tenantId === null ? "is" : "=", tenantId)
          .executeTakeFirst();
        return row === undefined ? null : fromRow(row);
      }),

    listWorkReceipts: (query = {}) =>
      guard("listWorkReceipts", { repository: query.repository ?? null }, async () => {
        let select = database
          .selectFrom("charter_work_receipts")
          .selectAll()
          .where("tenant_id", tenantId === null ? "is" : "=", tenantId);
        if (query.repository !== undefined) select = select.where("repository", "=", query.repository);
        if (query.runId !== undefined) select = select.where("run_id", "=", query.runId);
        if (query.status !== undefined) select = select.where("status", "=", query.status);
        const direction = query.newestFirst === true ? "desc" : "asc";
        select = select.orderBy("created_at", direction).orderBy("receipt_id", direction);
        // SQLite takes an OFFSET only after a LIMIT.
        if (query.limit !== undefined || query.offset !== undefined) {
          select = select.limit(Math.max(Math.trunc(query.limit ?? Number.MAX_SAFE_INTEGER), 1));
          select = select.offset(Math.max(Math.trunc(query.offset ?? 0), 0));
        }
        const rows = await select.execute();
        return rows.map(fromRow);
      }),
  };
}
