import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { migrateRunStore } from "../../src/store/migrate-run-store.js";
import { migrationTableName } from "../../src/store/migrations/run-store-migrations.js";
import { openPostgresDatabase } from "../../src/store/open-postgres-database.js";
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

    // Stores (and tests) share one database, each in its own schema, and drop theirs when done: a store that read
    // every schema's tables while migrating failed when one of them was dropped meanwhile.
    it("reads only its own schema's tables when it migrates, not another schema's", async () => {
      const [own, other] = [0, 1].map(() => `charter_test_${randomUUID().replaceAll("-", "").slice(0, 16)}`);
      const elsewhere = await openPostgresDatabase(url, { schema: other as string });
      const opened = await openPostgresDatabase(url, { schema: own as string });
      try {
        await sql`create table ${sql.table(`${other}.elsewhere`)} (id integer)`.execute(elsewhere.database);
        await migrateRunStore(opened.database, { schema: opened.schema });
        const tables = await opened.database.introspection.getTables({ withInternalKyselyTables: true });
        expect(tables.map((table) => table.name)).toContain(migrationTableName);
        expect(tables.map((table) => table.name)).not.toContain("elsewhere");
        expect(tables.every((table) => table.schema === own)).toBe(true);
        const migrations = tables.find((table) => table.name === migrationTableName);
        expect(migrations?.columns.map((column) => column.name)).toEqual(["name", "timestamp"]);
        expect(await opened.database.introspection.getSchemas()).toEqual([{ name: own }]);
      } finally {
        for (const schema of [own, other])
          await sql`drop schema if exists ${sql.id(schema as string)} cascade`.execute(opened.database);
        await opened.database.destroy();
        await elsewhere.database.destroy();
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
