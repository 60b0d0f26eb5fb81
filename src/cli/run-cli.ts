import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { CharterError } from "../foundation/charter-error.js";
import type { CliStreams } from "./cli-streams.js";
import { demoCommand } from "./demo-command.js";
import { exitCodeForError, exitCodes } from "./exit-code.js";
import { replayCommand } from "./replay-command.js";
import { resumeCommand } from "./resume-command.js";
import { runCommand } from "./run-command.js";
import { runsCommand } from "./runs-command.js";
import { verifyCommand } from "./verify-command.js";

const usage = `Usage:
  charter run <agent.md> [prompt|-] [--config FILE] [--set key=value ...] [--stream] [--json] [--runs-dir DIR]
      [--store URL]
  charter verify <run-dir|run-id> [--json] [--runs-dir DIR] [--store URL] [--config FILE]
  charter replay <run-dir|run-id> [--live-tools] [--json] [--runs-dir DIR] [--store URL] [--config FILE]
  charter resume <run-id> [--approve CALL-ID ...] [--deny CALL-ID ...] [--json] [--store URL] [--config FILE]
  charter runs list [--limit N] [--json] [--store URL] [--config FILE]
  charter runs show <run-id> [--json] [--store URL] [--config FILE]
  charter demo [--json] [--runs-dir DIR]
  charter --version | --help

The run store: --store, else the configuration's store (--config FILE and the .charter.json layers), else
CHARTER_DATABASE_URL, else ~/.charter/charter.db.

Exit codes: 0 success, 1 session failure, 3 tool server failure or unknown tool, 4 invalid arguments or
configuration, 5 output schema validation failure.`;

/** Parses the command line and runs one command; returns the exit code. Never throws. */
export async function runCli(argv: readonly string[], streams: CliStreams): Promise<number> {
  try {
    const [command, ...rest] = argv;
    if (command === undefined || command === "--help" || command === "-h" || command === "help") {
      streams.stdout.write(`${usage}\n`);
      return command === undefined ? exitCodes.invalidInput : exitCodes.success;
    }
    if (command === "--version") {
      const packageJson = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
      streams.stdout.write(`charter ${packageJson.version}\n`);
      return exitCodes.success;
    }
    const { values, positionals } = parseArgs({
      args: [...rest],
      allowPositionals: true,
      options: {
        config: { type: "string" },
        set: { type: "string", multiple: true },
        json: { type: "boolean", default: false },
        stream: { type: "boolean", default: false },
        "runs-dir": { type: "string" },
        store: { type: "string" },
        "live-tools": { type: "boolean", default: false },
        approve: { type: "string", multiple: true },
        deny: { type: "string", multiple: true },
        limit: { type: "string" },
      },
    });
    switch (command) {
      case "run":
        return await runCommand(positionals, values, streams);
      case "verify":
        return await verifyCommand(positionals, values, streams);
      case "demo":
        return await demoCommand(values, streams);
      case "replay":
        return await replayCommand(positionals, values, streams);
      case "resume":
        return await resumeCommand(positionals, values, streams);
      case "runs":
        return await runsCommand(positionals, values, streams);
      default:
        throw new CharterError("ARGUMENT_INVALID", `unknown command '${command}'\n${usage}`, {
          details: { command },
        });
    }
  } catch (error) {
    const code = CharterError.isInstance(error) ? error.code : "ARGUMENT_INVALID";
    const message = error instanceof Error ? error.message : String(error);
    streams.stderr.write(`charter: ${code}: ${message}\n`);
    // parseArgs reports bad options as TypeErrors with a Node error code: invalid arguments.
    return CharterError.isInstance(error) ? exitCodeForError(error.code) : exitCodes.invalidInput;
  }
}
