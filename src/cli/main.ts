#!/usr/bin/env node
import { runCli } from "./run-cli.js";

// The binary: everything testable lives in run-cli.ts; this file only binds it to the process.
const controller = new AbortController();
process.once("SIGINT", () => controller.abort());
process.once("SIGTERM", () => controller.abort());
const exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  signal: controller.signal,
});
process.exitCode = exitCode;
