import { describe, expect, it } from "vitest";
import { openRunStore } from "../../src/store/open-run-store.js";
import { charterErrorOf } from "./conformance-chain.js";
import { postgresStoreFactory, postgresTestUrl as url } from "./postgres-store-factory.js";
import { describeRunStoreConformance } from "./run-store-conformance.js";
import { newTestEnvironment } from "./store-harness.js";

if (url !== "") {
  describeRunStoreConformance("postgres", postgresStoreFactory);

  describe("PostgreSQL run store", () => {
    it("keeps the password out of its location and reports an unreachable server as store_unavailable", async () => {
      const { store, dispose } = await postgresStoreFactory();
      try {
        expect(store.backend).toBe("postgres");
        const unreachable = await charterErrorOf(
          openRunStore({
            url: "postgres://charter:hunter22@127.0.0.1:1/charter",
            environment: newTestEnvironment(),
          }),
        );
        expect(unreachable.code).toBe("INTERNAL_ERROR");
        expect(unreachable.details.reason).toBe("store_unavailable");
        expect(unreachable.details.location).toBe("postgres://charter:***@127.0.0.1:1/charter");
        const badSchema = await charterErrorOf(
          openRunStore({ url, postgres: { schema: "Robert'); drop" }, environment: newTestEnvironment() }),
        );
        expect(badSchema.code).toBe("CONFIGURATION_INVALID");
      } finally {
        await dispose();
      }
    });
  });
} else if (process.env.CI === "true") {
  describe("PostgreSQL run store", () => {
    it("needs a server: CHARTER_TEST_DATABASE_URL is not set", () => {
      throw new Error(
        'CHARTER_TEST_DATABASE_URL is not set in CI: run `eval "$(bash scripts/postgres-for-tests.sh)"` before the tests',
      );
    });
  });
} else {
  describe.skip('PostgreSQL run store (skipped: set CHARTER_TEST_DATABASE_URL, e.g. eval "$(bash scripts/postgres-for-tests.sh)")', () => {
    it("runs the conformance suite against a real server", () => undefined);
  });
}
