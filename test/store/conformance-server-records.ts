import { describe, expect, it } from "vitest";
import type { ApiKeyInput } from "../../src/store/server-records.js";
import { charterErrorOf } from "./conformance-chain.js";
import type { ConformanceContext } from "./run-store-conformance.js";
import { createDraftedRun, draftRun } from "./store-harness.js";

function apiKey(keyId: string, role = "operator"): ApiKeyInput {
  return { keyId, userId: "ada", role, name: `key ${keyId}`, secretHash: `hash-${keyId}`, createdAt: 1000 };
}

/** What the server keeps beside the runs: keys, idempotency keys, security events, tenant configurations. */
export function describeServerRecordsConformance({ current }: ConformanceContext): void {
  describe("server records", () => {
    it("API keys: made and revoked for one tenant, found by id whatever the tenant, never for the default tenant", async () => {
      const { store } = current();
      const acme = store.forTenant("acme");
      await acme.createApiKey(apiKey("key-a1", "admin"));
      await acme.createApiKey(apiKey("key-a2"));
      await store.forTenant("globex").createApiKey(apiKey("key-g1", "viewer"));
      expect(await store.findApiKey("key-a1")).toEqual({
        ...apiKey("key-a1", "admin"),
        tenantId: "acme",
        revokedAt: null,
      });
      expect((await store.forTenant("globex").findApiKey("key-a2"))?.tenantId).toBe("acme");
      expect(await store.findApiKey("key-none")).toBeNull();
      expect((await acme.listApiKeys()).map((key) => key.keyId)).toEqual(["key-a1", "key-a2"]);
      expect((await store.forTenant("globex").listApiKeys()).map((key) => key.keyId)).toEqual(["key-g1"]);
      expect(await store.listApiKeys()).toEqual([]);
      // Another tenant cannot revoke acme's key; acme can, once.
      expect(await store.forTenant("globex").revokeApiKey("key-a2", 2000)).toBe(false);
      expect(await acme.revokeApiKey("key-a2", 2000)).toBe(true);
      expect(await acme.revokeApiKey("key-a2", 3000)).toBe(false);
      expect((await store.findApiKey("key-a2"))?.revokedAt).toBe(2000);
      const duplicate = await charterErrorOf(store.forTenant("globex").createApiKey(apiKey("key-a1")));
      expect(duplicate.details.reason).toBe("duplicate_record");
      const untenanted = await charterErrorOf(store.createApiKey(apiKey("key-d1")));
      expect(untenanted.details.reason).toBe("tenant_mismatch");
    });

    it("Idempotency-Key: of 20 concurrent claims exactly one wins and every other reads what it stored, per tenant", async () => {
      const { store } = current();
      const acme = store.forTenant("acme");
      const claims = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          acme.claimIdempotencyKey({
            idempotencyKey: "order-7",
            requestHash: "hash-of-body",
            runId: `run_${index}`,
            createdAt: 1000 + index,
          }),
        ),
      );
      const winners = claims.flatMap((claim, index) => (claim.claimed ? [index] : []));
      expect(winners.length).toBe(1);
      const winner = `run_${winners[0]}`;
      for (const claim of claims) {
        if (!claim.claimed)
          expect(claim.existing).toMatchObject({ runId: winner, requestHash: "hash-of-body" });
      }
      // The same key is another tenant's own.
      expect(
        await store.forTenant("globex").claimIdempotencyKey({
          idempotencyKey: "order-7",
          requestHash: "other",
          runId: "run_g",
          createdAt: 5,
        }),
      ).toEqual({ claimed: true });
      // Released for another run: nothing happens; released for its run: claimable again.
      await acme.releaseIdempotencyKey("order-7", "run_other");
      expect(
        (
          await acme.claimIdempotencyKey({
            idempotencyKey: "order-7",
            requestHash: "x",
            runId: "r",
            createdAt: 9,
          })
        ).claimed,
      ).toBe(false);
      await acme.releaseIdempotencyKey("order-7", winner);
      expect(
        await acme.claimIdempotencyKey({
          idempotencyKey: "order-7",
          requestHash: "x",
          runId: "r",
          createdAt: 9,
        }),
      ).toEqual({
        claimed: true,
      });
    });

    it("security events: recorded and listed per tenant, counted per client address across tenants", async () => {
      const { store } = current();
      const event = (eventId: string, tenant: string, address: string, createdAt: number) =>
        store.forTenant(tenant).recordSecurityEvent({
          eventId,
          kind: "tenant_scope_violation",
          clientAddress: address,
          userId: "mallory",
          details: { route: "/v1/runs/:id", runId: "run_x" },
          createdAt,
        });
      await event("event_1", "acme", "10.0.0.1", 1000);
      await event("event_2", "globex", "10.0.0.1", 2000);
      await event("event_3", "acme", "10.0.0.2", 3000);
      expect((await store.forTenant("acme").listSecurityEvents()).map((each) => each.eventId)).toEqual([
        "event_1",
        "event_3",
      ]);
      expect((await store.forTenant("acme").listSecurityEvents({ since: 2000 }))[0]).toEqual({
        eventId: "event_3",
        tenantId: "acme",
        kind: "tenant_scope_violation",
        clientAddress: "10.0.0.2",
        userId: "mallory",
        details: { route: "/v1/runs/:id", runId: "run_x" },
        createdAt: 3000,
      });
      const count = (address: string, since: number) =>
        store.countSecurityEventsFromAddress({
          clientAddress: address,
          kind: "tenant_scope_violation",
          since,
        });
      expect(await count("10.0.0.1", 0)).toBe(2);
      expect(await count("10.0.0.1", 1500)).toBe(1);
      expect(await count("10.0.0.9", 0)).toBe(0);
    });

    it("tenant configurations: one document per tenant, replaced whole, read by its tenant only", async () => {
      const { store } = current();
      expect(await store.forTenant("acme").getTenantConfiguration()).toBeNull();
      await store.forTenant("acme").putTenantConfiguration({ allowedAgents: ["a"] }, 1000);
      await store.forTenant("acme").putTenantConfiguration({ allowedAgents: ["b"], models: "x" }, 2000);
      await store.forTenant("globex").putTenantConfiguration({ allowedAgents: [] }, 1500);
      expect(await store.forTenant("acme").getTenantConfiguration()).toEqual({
        tenantId: "acme",
        configuration: { allowedAgents: ["b"], models: "x" },
        updatedAt: 2000,
      });
      expect((await store.forTenant("globex").getTenantConfiguration())?.configuration).toEqual({
        allowedAgents: [],
      });
      expect(await store.getTenantConfiguration()).toBeNull();
    });

    it("budget usage: added per tenant and UTC day atomically (20 at once), summed over a period, per tenant only", async () => {
      const { store } = current();
      const day = Date.UTC(2026, 10, 26);
      const nextDay = day + 86_400_000;
      const acme = store.forTenant("acme");
      expect(await acme.readBudgetUsage({ from: day, to: nextDay })).toEqual({ tokens: 0, costUsd: 0 });
      await Promise.all(
        Array.from({ length: 20 }, () => acme.addBudgetUsage({ dayStart: day, tokens: 150, costUsd: 0.25 })),
      );
      await acme.addBudgetUsage({ dayStart: nextDay, tokens: 7, costUsd: 0.5 });
      await store.forTenant("globex").addBudgetUsage({ dayStart: day, tokens: 1, costUsd: 1 });
      await store.addBudgetUsage({ dayStart: day, tokens: 2, costUsd: 2 });
      expect(await acme.readBudgetUsage({ from: day, to: nextDay })).toEqual({ tokens: 3000, costUsd: 5 });
      expect(await acme.readBudgetUsage({ from: day, to: nextDay + 86_400_000 })).toEqual({
        tokens: 3007,
        costUsd: 5.5,
      });
      expect(await acme.readBudgetUsage({ from: nextDay, to: nextDay + 86_400_000 })).toEqual({
        tokens: 7,
        costUsd: 0.5,
      });
      expect(await store.forTenant("globex").readBudgetUsage({ from: day, to: nextDay })).toEqual({
        tokens: 1,
        costUsd: 1,
      });
      expect(await store.readBudgetUsage({ from: day, to: nextDay })).toEqual({ tokens: 2, costUsd: 2 });
    });

    it("findRunTenant names the tenant of any stored run or run request, and nothing for a run no tenant has", async () => {
      const { store, environment } = current();
      await createDraftedRun(store, draftRun(environment, "run-of-acme"), { tenantId: "acme" });
      await createDraftedRun(store, draftRun(environment, "run-of-none"));
      expect(await store.forTenant("globex").findRunTenant("run-of-acme")).toEqual({ tenantId: "acme" });
      expect(await store.forTenant("globex").findRunTenant("run-of-none")).toEqual({ tenantId: null });
      expect(await store.findRunTenant("run-missing")).toBeUndefined();
      // A server's run accepted and not started: its request names the tenant.
      await store.forTenant("initech").createRunRequest({
        event: {
          runId: "run-queued",
          requestId: "req_1",
          userId: null,
          correlationId: "c",
          conversationId: null,
          data: {},
        },
        request: { runId: "run-queued" },
      });
      expect(await store.forTenant("globex").findRunTenant("run-queued")).toEqual({ tenantId: "initech" });
    });
  });
}
