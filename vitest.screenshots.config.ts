import { defineConfig } from "vitest/config";

/** `npm run screenshots`: only the screenshot script, which the test suite does not run. */
export default defineConfig({
  test: {
    include: ["test/viewer/take-screenshots.ts"],
    globalSetup: ["test/global-temporary-directory.ts"],
    setupFiles: ["test/setup-isolated-store.ts"],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
