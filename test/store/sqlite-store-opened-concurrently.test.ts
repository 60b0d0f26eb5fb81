import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { systemEnvironment } from "../../src/foundation/environment.js";
import { openRunStore } from "../../src/store/open-run-store.js";

describe("a new SQLite store opened by several callers of one process at once", () => {
  it("is migrated once, and every caller gets a working store", async () => {
    // Runs of a work plan's level start together in one process, each opening the store: on a new database their
    // migrations used to meet (better-sqlite3 waits for a lock synchronously, so the holder could not go on) and
    // all but one failed with store_unavailable.
    const path = join(await mkdtemp(join(tmpdir(), "charter-store-concurrent-")), "runs.db");
    const stores = await Promise.all(
      Array.from({ length: 4 }, () => openRunStore({ path, environment: systemEnvironment })),
    );
    try {
      for (const store of stores) expect(await store.listRuns({ limit: 1 })).toEqual([]);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });
});
