import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import type { WorkReceiptInput } from "../../src/store/run-store.js";
import type { ConformanceContext } from "./run-store-conformance.js";

function receiptInput(receiptId: string, repository: string, createdAt: number): WorkReceiptInput {
  return {
    receiptId,
    runId: `run_${receiptId}`,
    workItemId: "item-1",
    repository,
    status: "success",
    receiptHash: "a".repeat(64),
    receipt: { receipt_id: receiptId, nested: { list: [1, "two", null] } },
    createdAt,
  };
}

export function describeWorkReceiptsConformance({ current }: ConformanceContext): void {
  describe("work item receipts", () => {
    it("stores a receipt once, reads it back whole, and only for its tenant", async () => {
      const { store } = current();
      const acme = store.forTenant("acme");
      await acme.putWorkReceipt(receiptInput("receipt_2", "/repo/one", 2000));
      await acme.putWorkReceipt(receiptInput("receipt_1", "/repo/one", 1000));
      await acme.putWorkReceipt(receiptInput("receipt_3", "/repo/two", 3000));
      expect(await acme.getWorkReceipt("receipt_1")).toEqual({
        ...receiptInput("receipt_1", "/repo/one", 1000),
        tenantId: "acme",
      });
      expect((await acme.listWorkReceipts({ repository: "/repo/one" })).map((r) => r.receiptId)).toEqual([
        "receipt_1",
        "receipt_2",
      ]);
      expect((await acme.listWorkReceipts()).length).toBe(3);
      // Newest first, by run and status, a page at a time (the server's work item listing).
      const ids = async (query: Parameters<typeof acme.listWorkReceipts>[0]) =>
        (await acme.listWorkReceipts(query)).map((r) => r.receiptId);
      expect(await ids({ newestFirst: true })).toEqual(["receipt_3", "receipt_2", "receipt_1"]);
      expect(await ids({ newestFirst: true, limit: 1, offset: 1 })).toEqual(["receipt_2"]);
      expect(await ids({ offset: 2 })).toEqual(["receipt_3"]);
      expect(await ids({ runId: "run_receipt_2" })).toEqual(["receipt_2"]);
      expect(await ids({ status: "success", repository: "/repo/two" })).toEqual(["receipt_3"]);
      expect(await ids({ status: "failure" })).toEqual([]);
      expect(await store.forTenant("globex").listWorkReceipts({ runId: "run_receipt_2" })).toEqual([]);
      // Another tenant, and the default one, see none of them.
      expect(await store.getWorkReceipt("receipt_1")).toBeNull();
      expect(await store.forTenant("globex").listWorkReceipts()).toEqual([]);
      // Never rewritten, whoever asks.
      const again = await acme
        .putWorkReceipt(receiptInput("receipt_1", "/repo/one", 5))
        .catch((error) => error);
      expect(CharterError.isInstance(again) && again.details.reason).toBe("duplicate_record");
      const other = await store
        .forTenant("globex")
        .putWorkReceipt(receiptInput("receipt_1", "/x", 5))
        .catch((e) => e);
      expect(CharterError.isInstance(other) && other.details.reason).toBe("duplicate_record");
      expect((await acme.getWorkReceipt("receipt_1"))?.createdAt).toBe(1000);
    });
  });
}
