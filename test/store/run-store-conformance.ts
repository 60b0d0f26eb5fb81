import { afterEach, beforeEach, describe } from "vitest";
import { describeBoundRecordsConformance } from "./conformance-bound-records.js";
import { describeChainConformance } from "./conformance-chain.js";
import { describeDurabilityConformance } from "./conformance-durability.js";
import { describeRateWindowsConformance } from "./conformance-rate-windows.js";
import { describeRecordsConformance } from "./conformance-records.js";
import { describeRunEventsConformance } from "./conformance-run-events.js";
import { describeServerRecordsConformance } from "./conformance-server-records.js";
import { describeTenantScopeConformance } from "./conformance-tenant-scope.js";
import { describeWorkReceiptsConformance } from "./conformance-work-receipts.js";
import type { RunStoreFactory, StoreUnderTest } from "./store-harness.js";

/** The fixture each conformance test gets: a fresh, empty store over its own database. */
export interface ConformanceContext {
  readonly current: () => StoreUnderTest;
  readonly factory: RunStoreFactory;
}

/**
 * The behaviour every run store backend must show, in the spirit of langgraphjs' checkpoint-validation
 * package: one suite, run against each backend by its own test file with a factory for fresh stores.
 */
export function describeRunStoreConformance(backend: string, factory: RunStoreFactory): void {
  describe(`run store conformance: ${backend}`, () => {
    let underTest: StoreUnderTest | null = null;
    beforeEach(async () => {
      underTest = await factory();
    });
    afterEach(async () => {
      await underTest?.dispose();
      underTest = null;
    });
    const context: ConformanceContext = {
      factory,
      current: () => {
        if (underTest === null) throw new Error("no store under test");
        return underTest;
      },
    };
    describeChainConformance(context);
    describeRecordsConformance(context);
    describeDurabilityConformance(context);
    describeBoundRecordsConformance(context);
    describeTenantScopeConformance(context);
    describeWorkReceiptsConformance(context);
    describeRunEventsConformance(context);
    describeServerRecordsConformance(context);
    describeRateWindowsConformance(context);
  });
}
