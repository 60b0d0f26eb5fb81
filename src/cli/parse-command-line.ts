import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import { CharterError } from "../foundation/charter-error.js";
import { nearestName } from "../foundation/nearest-name.js";
import type { CommandDeclaration, FlagDeclarations, FlagValues } from "./command-declaration.js";

/** What one command's arguments parsed to: its positionals and flag values, or a request for its help. */
export interface ParsedCommandLine {
  readonly help: boolean;
  readonly positionals: string[];
  /** Each value has its flag's declared type: parseArgs assigns it so, and every token is checked below. */
  readonly values: FlagValues<FlagDeclarations>;
}

/**
 * Parses the arguments after the command name with that command's own flags only (node:util parseArgs), so a
 * flag another command takes is as unknown here as a typo. Every mistake is a typed ARGUMENT_INVALID that names
 * the flag and, when one is close, the flag that was probably meant.
 */
export function parseCommandLine(command: CommandDeclaration, args: readonly string[]): ParsedCommandLine {
  const flags: FlagDeclarations = {
    ...command.flags,
    help: { type: "boolean", short: "h", description: "Show this help." },
  };
  const options: ParseArgsOptionsConfig = Object.fromEntries(
    Object.entries(flags).map(([name, flag]) => [
      name,
      {
        type: flag.type,
        ...(flag.multiple === true ? { multiple: true } : {}),
        ...(flag.short !== undefined ? { short: flag.short } : {}),
        ...(flag.default !== undefined
          ? { default: typeof flag.default === "object" ? [...flag.default] : flag.default }
          : {}),
      },
    ]),
  );
  // Not strict: the tokens let this function name the flag and suggest one instead of Node's generic message.
  const { values, positionals, tokens } = parseArgs({
    args: [...args],
    options,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  for (const token of tokens ?? []) {
    if (token.kind !== "option") continue;
    const flag = flags[token.name];
    if (flag === undefined) throw unknownFlag(command, token.rawName, flags);
    if (flag.type === "string" && token.value === undefined) {
      throw new CharterError(
        "ARGUMENT_INVALID",
        `${token.rawName} needs a value: ${token.rawName} ${flag.valueName ?? "VALUE"} (charter ${command.name} --help)`,
        { details: { command: command.name, flag: token.rawName, reason: "value_missing" } },
      );
    }
    if (flag.type === "boolean" && token.value !== undefined) {
      throw new CharterError(
        "ARGUMENT_INVALID",
        `${token.rawName} takes no value, but was given '${token.value}'`,
        { details: { command: command.name, flag: token.rawName, reason: "value_unexpected" } },
      );
    }
  }
  const typedValues = values as FlagValues<FlagDeclarations>;
  if (values.help === true) return { help: true, positionals, values: typedValues };
  if (positionals.length > command.positionals.length) {
    const extra = positionals.slice(command.positionals.length);
    const takes =
      command.positionals.length === 0
        ? "no arguments"
        : command.positionals.map((positional) => positional.name).join(", ");
    throw new CharterError(
      "ARGUMENT_INVALID",
      `unexpected argument${extra.length > 1 ? "s" : ""} ${extra.map((value) => `'${value}'`).join(" ")}: charter ${command.name} takes ${takes} (quote an argument that has spaces)`,
      { details: { command: command.name, argument: extra[0], reason: "unexpected" } },
    );
  }
  return { help: false, positionals, values: typedValues };
}

function unknownFlag(command: CommandDeclaration, rawName: string, flags: FlagDeclarations): CharterError {
  const known = Object.entries(flags).flatMap(([name, flag]) => [
    `--${name}`,
    ...(flag.short !== undefined ? [`-${flag.short}`] : []),
  ]);
  const suggestion = nearestName(
    rawName.replace(/^-+/, ""),
    known.map((name) => name.replace(/^-+/, "")),
  );
  const meant =
    suggestion === undefined ? undefined : known.find((name) => name.replace(/^-+/, "") === suggestion);
  return new CharterError(
    "ARGUMENT_INVALID",
    `unknown flag ${rawName} for charter ${command.name}${meant === undefined ? "" : `; did you mean ${meant}?`} (charter ${command.name} --help lists its flags)`,
    {
      details: {
        command: command.name,
        flag: rawName,
        reason: "unknown_flag",
        ...(meant !== undefined ? { suggestion: meant } : {}),
      },
    },
  );
}
