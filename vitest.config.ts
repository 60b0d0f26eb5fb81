import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-temporary-directory.ts"],
    setupFiles: ["test/setup-isolated-store.ts"],
    // A bound for a test that hangs, never a wait: many tests chain several real processes (charter run, resume,
    // verify...), which take a while when two files run at once on a busy 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default is one worker less than the cores, which on a 2-core machine is one test file at a time.
    // Most of a file's time is spent in the processes it starts (charter, charter serve, MCP servers, git) and in
    // waiting for them, which leaves the second core idle: two files at a time use it.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Each worker process runs many test files one after another, sharing the modules they import, rather than
    // a new process per file (about a second of start-up and imports each). This is safe because nothing a
    // file leaves behind changes another's result: Charter registers no global OpenTelemetry provider and no
    // process signal handler outside its binary's entry, its module-level caches are keyed by path or content,
    // tests that change process.env put it back, no test mocks a module or fakes timers, test helpers register
    // their hooks from the functions a test file calls (never at module level), and every file gets its own
    // default run store (test/setup-isolated-store.ts).
    isolate: false,
  },
});
