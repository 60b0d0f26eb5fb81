import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * One temporary directory for the whole test run, removed when it ends: the test workers (forked after this
 * runs) and the processes they start inherit it as TMPDIR, so every `os.tmpdir()` file a test makes (projects,
 * run stores, stored tool outputs) lands in it and nothing is left behind in the system's temporary directory.
 * `CHARTER_KEEP_TEST_FILES=1` keeps it (its path is printed) for looking at what a test wrote.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const directory = await mkdtemp(join(tmpdir(), "charter-tests-"));
  process.env.TMPDIR = directory;
  return async () => {
    if (process.env.CHARTER_KEEP_TEST_FILES === "1") {
      console.log(`test files kept in ${directory}`);
      return;
    }
    await rm(directory, { recursive: true, force: true });
  };
}
