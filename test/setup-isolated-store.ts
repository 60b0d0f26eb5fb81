import { tmpdir } from "node:os";
import { join } from "node:path";

// Every test worker gets its own default run store, so that runs of parallel test files never share a database
// (and no test writes to the user's ~/.charter/charter.db). Tests that need a particular store pass it.
process.env.CHARTER_DATABASE_URL ??= `sqlite:${join(tmpdir(), `charter-test-store-${process.pid}.db`)}`;
