import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";

// Every test file gets its own default run store, so that runs of other test files never share a database
// (and no test writes to the user's ~/.charter/charter.db). Tests that need a particular store pass it.
// The test workers run many files each (vitest.config.ts: isolate false) and this file runs again before each
// one: the store a file inherited from the environment is remembered once, so that a file's own store is never
// taken for it by the next file.
const inherited = Symbol.for("charter.test.inheritedDatabaseUrl");
const remembered = globalThis as { [inherited]?: { readonly url: string | undefined } };
remembered[inherited] ??= { url: process.env.CHARTER_DATABASE_URL };
process.env.CHARTER_DATABASE_URL =
  remembered[inherited].url ?? `sqlite:${join(tmpdir(), `charter-test-store-${randomUUID()}.db`)}`;
