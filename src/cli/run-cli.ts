import { readFileSync } from "node:fs";
import { CharterError } from "../foundation/charter-error.js";
import { nearestName } from "../foundation/nearest-name.js";
import type { CliStreams } from "./cli-streams.js";
import type { CommandDeclaration } from "./command-declaration.js";
import { commandHelp } from "./command-help.js";
import { commands } from "./commands.js";
import { exitCodeForError, exitCodes } from "./exit-code.js";
import { parseCommandLine } from "./parse-command-line.js";

/** `charter --help`: the commands, where the run store is, what the exit codes mean. */
function overview(): string {
  const width = Math.max(...commands.map((command) => command.name.length)) + 2;
  return `charter: a contract-bound runtime for LLM agents

Usage:
  charter <command> [arguments] [flags]
  charter help <command>      what a command does, its flags and their defaults, examples
  charter --version | -v

Commands:
${commands.map((command) => `  ${command.name.padEnd(width)}${command.summary}`).join("\n")}

Run 'charter <command> --help' for a command's flags.

The run store: --store, else the configuration's store (--config FILE and the .charter.json layers), else
CHARTER_DATABASE_URL, else ~/.charter/charter.db.

Exit codes: 0 success, 1 session failure, 3 tool server failure or unknown tool, 4 invalid arguments or
configuration, 5 output schema validation failure.
`;
}

/** The command named `name`, or a typed error that suggests the nearest one. */
function findCommand(name: string): CommandDeclaration {
  const command = commands.find((candidate) => candidate.name === name);
  if (command !== undefined) return command;
  const suggestion = nearestName(
    name,
    commands.map((candidate) => candidate.name),
  );
  throw new CharterError(
    "ARGUMENT_INVALID",
    `unknown command '${name}'${suggestion === undefined ? "" : `; did you mean ${suggestion}?`} (charter --help lists the commands)`,
    {
      details: {
        command: name,
        reason: "unknown_command",
        ...(suggestion !== undefined ? { suggestion } : {}),
      },
    },
  );
}

/** Parses the command line and runs one command; returns the exit code. Never throws. */
export async function runCli(argv: readonly string[], streams: CliStreams): Promise<number> {
  try {
    const [name, ...rest] = argv;
    if (name === undefined) {
      // No command is a usage mistake: the overview goes to stderr, the exit code says invalid input.
      streams.stderr.write(overview());
      return exitCodes.invalidInput;
    }
    if (name === "--help" || name === "-h") {
      streams.stdout.write(overview());
      return exitCodes.success;
    }
    if (name === "help") {
      const [topic, ...extra] = rest;
      if (extra.length > 0)
        throw new CharterError("ARGUMENT_INVALID", "usage: charter help [command]", {
          details: { argument: extra[0], reason: "unexpected" },
        });
      streams.stdout.write(topic === undefined ? overview() : commandHelp(findCommand(topic)));
      return exitCodes.success;
    }
    if (name === "--version" || name === "-v") {
      const packageJson = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
      streams.stdout.write(`charter ${packageJson.version}\n`);
      return exitCodes.success;
    }
    if (name.startsWith("-")) {
      const suggestion = nearestName(name.replace(/^-+/, ""), ["help", "version"]);
      throw new CharterError(
        "ARGUMENT_INVALID",
        `unknown flag ${name} before a command${suggestion === undefined ? "" : `; did you mean --${suggestion}?`} (usage: charter <command> [flags]; charter --help lists the commands)`,
        {
          details: {
            flag: name,
            reason: "unknown_flag",
            ...(suggestion !== undefined ? { suggestion: `--${suggestion}` } : {}),
          },
        },
      );
    }
    const command = findCommand(name);
    const parsed = parseCommandLine(command, rest);
    if (parsed.help) {
      streams.stdout.write(commandHelp(command));
      return exitCodes.success;
    }
    return await command.run(parsed.positionals, parsed.values, streams);
  } catch (error) {
    const code = CharterError.isInstance(error) ? error.code : "INTERNAL_ERROR";
    const message = error instanceof Error ? error.message : String(error);
    streams.stderr.write(`charter: ${code}: ${message}\n`);
    return CharterError.isInstance(error) ? exitCodeForError(error.code) : exitCodes.sessionFailure;
  }
}
