#!/usr/bin/env node
// The `charter` binary's entry. Charter's native module (better-sqlite3) does not report an older Node: on
// Node 20 it ends the process with a segmentation fault, which no error handler can catch. So this file checks
// the Node version before anything else is loaded: it imports nothing statically, uses no syntax newer than
// ES2017 (TypeScript emits it as written, and an old Node must be able to parse it) and loads the CLI with a
// dynamic import only once the version is known to be supported. The minimum is package.json's `engines`.
const minimumMajor = 22;
const minimumMinor = 12;
const running = process.versions.node;
const parts = running.split(".");
const major = Number(parts[0]);
const minor = Number(parts[1]);

if (major < minimumMajor || (major === minimumMajor && minor < minimumMinor)) {
  process.stderr.write(
    `charter needs Node >= ${minimumMajor}.${minimumMinor} (this is Node ${running}).\n` +
      "Install Node 24 (https://nodejs.org/en/download, or `nvm install 24`) and run charter with it.\n" +
      "In a clone of Charter, `npm install` also installs Node 24 for the project's scripts: " +
      "`npm run charter -- <arguments>` runs charter on it.\n",
  );
  // 4: invalid input, as for any other environment charter cannot run in.
  process.exitCode = 4;
} else if (process.argv.length === 3 && (process.argv[2] === "--version" || process.argv[2] === "-v")) {
  // The most frequent probe of an installed command answers without loading the CLI's command table (run-cli.ts
  // answers the same for callers that run the CLI in process).
  import("node:fs").then((fs) => {
    const packageJson = JSON.parse(fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    process.stdout.write(`charter ${packageJson.version}\n`);
  });
} else {
  import("./start-cli.js").then((cli) => cli.startCli());
}

export {};
