import type { CommandDeclaration, FlagDeclaration } from "./command-declaration.js";

/** `charter <command> --help`: what the command does, its arguments, every flag with its default, examples. */
export function commandHelp(command: CommandDeclaration): string {
  const positionals = command.positionals
    .map((positional) => (positional.optional === true ? `[${positional.name}]` : `<${positional.name}>`))
    .join(" ");
  const lines = [
    `charter ${command.name}: ${command.summary}`,
    "",
    wrap(command.description, 2),
    "",
    "Usage:",
    `  charter ${command.name}${positionals === "" ? "" : ` ${positionals}`} [flags]`,
  ];
  if (command.positionals.length > 0) {
    lines.push("", "Arguments:");
    const width = Math.max(...command.positionals.map((positional) => positional.name.length)) + 2;
    for (const positional of command.positionals)
      lines.push(`  ${positional.name.padEnd(width)}${positional.description}`);
  }
  lines.push("", "Flags:");
  const flags: [string, FlagDeclaration][] = [
    ...Object.entries(command.flags),
    ["help", { type: "boolean", short: "h", default: false, description: "Show this help." }],
  ];
  for (const [name, flag] of flags) {
    const short = flag.short === undefined ? "    " : `-${flag.short}, `;
    const value = flag.type === "string" ? ` ${flag.valueName ?? "VALUE"}` : "";
    lines.push(`  ${short}--${name}${value}`);
    const repeat = flag.multiple === true ? " May be given more than once." : "";
    const fallback = name === "help" ? "" : ` Default: ${defaultText(flag)}.`;
    lines.push(wrap(`${flag.description}${repeat}${fallback}`, 8));
  }
  lines.push("", command.examples.length > 1 ? "Examples:" : "Example:");
  for (const example of command.examples) lines.push(`  ${example}`);
  return `${lines.join("\n")}\n`;
}

function defaultText(flag: FlagDeclaration): string {
  if (flag.defaultText !== undefined) return flag.defaultText;
  if (flag.default === undefined) return flag.type === "boolean" ? "false" : "none";
  if (Array.isArray(flag.default)) return flag.default.length === 0 ? "none" : flag.default.join(", ");
  return String(flag.default);
}

/** Wraps a paragraph at 100 columns, each line indented. */
function wrap(text: string, indent: number): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line !== "" && indent + line.length + 1 + word.length > 100) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(line);
  return lines.map((text) => `${" ".repeat(indent)}${text}`).join("\n");
}
