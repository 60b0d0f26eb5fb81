import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openRunStore } from "../../src/store/open-run-store.js";
import { defaultRunStorePath, resolveRunStoreLocation } from "../../src/store/run-store-location.js";
import { describeRunStoreConformance } from "./run-store-conformance.js";
import { sqliteStoreFactory } from "./sqlite-store-factory.js";
import { newTestEnvironment } from "./store-harness.js";

describeRunStoreConformance("sqlite", sqliteStoreFactory);

describe("SQLite run store", () => {
  it("lives in ~/.charter/charter.db unless told otherwise; CHARTER_DATABASE_URL picks PostgreSQL", () => {
    expect(resolveRunStoreLocation({ homeDirectory: "/home/ada", variables: {} })).toEqual({
      backend: "sqlite",
      path: "/home/ada/.charter/charter.db",
    });
    expect(defaultRunStorePath("/home/ada")).toBe("/home/ada/.charter/charter.db");
    const url = "postgres://charter:secret@db.internal:5432/charter";
    expect(resolveRunStoreLocation({ variables: { CHARTER_DATABASE_URL: url } })).toEqual({
      backend: "postgres",
      url,
    });
    expect(
      resolveRunStoreLocation({ path: "/data/runs.db", variables: { CHARTER_DATABASE_URL: url } }),
    ).toEqual({
      backend: "sqlite",
      path: "/data/runs.db",
    });
    expect(resolveRunStoreLocation({ url: "sqlite:///var/charter.db" })).toEqual({
      backend: "sqlite",
      path: "/var/charter.db",
    });
  });

  it("creates the default file with private permissions, in WAL mode with synchronous=NORMAL", async () => {
    const home = await mkdtemp(join(tmpdir(), "charter-home-"));
    try {
      const store = await openRunStore({
        homeDirectory: home,
        variables: {},
        environment: newTestEnvironment(),
      });
      expect(store.backend).toBe("sqlite");
      expect(store.location).toBe(join(home, ".charter", "charter.db"));
      await store.close();
      expect((await stat(join(home, ".charter"))).mode & 0o777).toBe(0o700);
      expect((await stat(join(home, ".charter", "charter.db"))).mode & 0o777).toBe(0o600);
      const database = new Database(join(home, ".charter", "charter.db"));
      try {
        expect(database.pragma("journal_mode", { simple: true })).toBe("wal");
      } finally {
        database.close();
      }
      const full = await openRunStore({
        path: join(home, "full.db"),
        environment: newTestEnvironment(),
        sqlite: { synchronous: "full" },
      });
      await full.close();
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
