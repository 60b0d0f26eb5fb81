import type { CliStreams } from "./cli-streams.js";

/** One flag of one command: what `node:util` parseArgs needs, plus what `--help` prints about it. */
export interface FlagDeclaration {
  readonly type: "string" | "boolean";
  /** May be given more than once; the command receives every value, in order. */
  readonly multiple?: boolean;
  /** A one-letter alias (`-v`). */
  readonly short?: string;
  /** The value the command receives when the flag is absent. */
  readonly default?: string | boolean | readonly string[];
  /** What `--help` prints as the default when it is not a fixed value (`the configuration's store`). */
  readonly defaultText?: string;
  /** The placeholder `--help` shows for a string flag's value (`FILE`, `URL`, `N`). */
  readonly valueName?: string;
  /** What the flag does, in one sentence. */
  readonly description: string;
}

export type FlagDeclarations = Readonly<Record<string, FlagDeclaration>>;

/** The values parseArgs hands a command for its flags: strings, booleans, or lists of strings when `multiple`. */
export type FlagValues<Flags extends FlagDeclarations> = {
  [Name in keyof Flags]?: Flags[Name] extends { multiple: true }
    ? string[]
    : Flags[Name] extends { type: "boolean" }
      ? boolean
      : string;
};

/** One positional argument, for `--help`; the command itself checks what it was given. */
export interface PositionalDeclaration {
  readonly name: string;
  readonly description: string;
  readonly optional?: boolean;
}

/**
 * A CLI command, declared in its own file: everything `charter <command> --help` prints and everything the parser
 * accepts comes from here, so adding a flag is one entry in `flags`.
 */
export interface CommandDeclaration<Flags extends FlagDeclarations = FlagDeclarations> {
  readonly name: string;
  /** One line for `charter --help`. */
  readonly summary: string;
  /** A paragraph for `charter <command> --help`: what it does and what it prints. */
  readonly description: string;
  readonly positionals: readonly PositionalDeclaration[];
  readonly flags: Flags;
  /** Whole command lines, each with an optional comment after `#`. */
  readonly examples: readonly string[];
  run(positionals: readonly string[], values: FlagValues<Flags>, streams: CliStreams): Promise<number>;
}

/** Declares a command with its flag values typed from its own flag declarations. */
export function defineCommand<const Flags extends FlagDeclarations>(
  declaration: CommandDeclaration<Flags>,
): CommandDeclaration<Flags> {
  return declaration;
}
