import { describe, expect, it } from "vitest";
import type { ConformanceContext } from "./run-store-conformance.js";

const minute = 60_000;

export function describeRateWindowsConformance({ current }: ConformanceContext): void {
  describe("rate-limit windows", () => {
    it("counts a subject's requests per window, apart per tenant, and atomically under concurrency", async () => {
      const { store } = current();
      const acme = store.forTenant("acme");
      const window = { windowStart: 10 * minute, expiredBefore: 9 * minute };
      const counts = await Promise.all(
        Array.from({ length: 10 }, () => acme.countInRateWindow({ subject: "user:ann", ...window })),
      );
      expect([...counts].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      // Another subject, another tenant and the store of no tenant (client addresses) count on their own.
      expect(await acme.countInRateWindow({ subject: "user:bob", ...window })).toBe(1);
      expect(await store.forTenant("globex").countInRateWindow({ subject: "user:ann", ...window })).toBe(1);
      expect(await store.countInRateWindow({ subject: "address:127.0.0.1", ...window })).toBe(1);
      // The next window starts again from one.
      expect(
        await acme.countInRateWindow({
          subject: "user:ann",
          windowStart: 11 * minute,
          expiredBefore: 10 * minute,
        }),
      ).toBe(1);
    });

    it("forgets the tenant's expired windows of every subject, not only of the one counted, and no other tenant's", async () => {
      const { store } = current();
      const acme = store.forTenant("acme");
      const old = { windowStart: 10 * minute, expiredBefore: 9 * minute };
      for (let index = 0; index < 3; index++) {
        await acme.countInRateWindow({ subject: "user:gone", ...old });
        await store.forTenant("globex").countInRateWindow({ subject: "user:gone", ...old });
      }
      // Much later, another subject of the tenant opens a window: the tenant's expired windows go.
      await acme.countInRateWindow({
        subject: "user:ann",
        windowStart: 20 * minute,
        expiredBefore: 19 * minute,
      });
      // Counted again in its old window, the gone subject starts from one: its rows were forgotten.
      expect(await acme.countInRateWindow({ subject: "user:gone", ...old })).toBe(1);
      // Another tenant's rows are not touched by this tenant's upkeep.
      expect(await store.forTenant("globex").countInRateWindow({ subject: "user:gone", ...old })).toBe(4);
    });
  });
}
