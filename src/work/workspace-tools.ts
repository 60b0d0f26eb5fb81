import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { defineFunctionTool } from "../tools/define-function-tool.js";
import type { RegisteredTool, ToolOutput } from "../tools/tool-definition.js";
import { confineWorkspacePath } from "./confine-workspace-path.js";
import { gitCommand } from "./git-command.js";
import { runShellCommand } from "./run-shell-command.js";
import type { WorkRepository } from "./work-repository.js";

/** Bounds on what one workspace tool call returns to the model. */
const maxReadCharacters = 200_000;
const maxListedFiles = 2_000;
const maxSearchLines = 200;
const maxCommandOutputBytes = 64 * 1024;
const defaultCommandTimeoutMs = 60_000;

export interface WorkspaceToolsOptions {
  readonly repository: WorkRepository;
  /** Offers `workspace__run_command` (the work item's `allow_commands`). */
  readonly allowCommands: boolean;
  /** How long a command may still run: the work item's remaining time, at most a minute per command. */
  readonly commandTimeoutMs?: () => number;
}

function failure(text: string, errorCode: ToolOutput["errorCode"] = "TOOL_EXECUTION_FAILED"): ToolOutput {
  return { text, isError: true, errorCode };
}

/**
 * The built-in workspace tools a work item's agent works through, every path confined to the repository
 * (`confineWorkspacePath`): a refused path or a failed operation is a tool error the model sees, never an exception.
 */
export function createWorkspaceTools(options: WorkspaceToolsOptions): RegisteredTool[] {
  const root = options.repository.root;
  async function confined(path: string): Promise<{ absolute: string; relative: string } | ToolOutput> {
    const result = await confineWorkspacePath(root, path);
    return result.ok ? result : failure(`refused: ${result.reason}`, "WORKSPACE_PATH_REFUSED");
  }
  const isOutput = (value: unknown): value is ToolOutput =>
    typeof value === "object" && value !== null && "isError" in value;

  const tools: RegisteredTool[] = [
    defineFunctionTool({
      name: "workspace__read_file",
      description: "Read a text file of the repository (path relative to the repository's top folder).",
      inputSchema: z.strictObject({ path: z.string() }),
      annotations: { readOnlyHint: true },
      async execute({ path }) {
        const target = await confined(path);
        if (isOutput(target)) return target;
        try {
          const text = await readFile(target.absolute, "utf8");
          return text.length > maxReadCharacters
            ? `${text.slice(0, maxReadCharacters)}\n[file truncated at ${maxReadCharacters} characters]`
            : text;
        } catch (error) {
          return failure(
            `cannot read '${target.relative}': ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
          );
        }
      },
    }),
    defineFunctionTool({
      name: "workspace__write_file",
      description: "Create or overwrite a file of the repository with the given text (folders are created).",
      inputSchema: z.strictObject({ path: z.string(), content: z.string() }),
      async execute({ path, content }) {
        const target = await confined(path);
        if (isOutput(target)) return target;
        try {
          await mkdir(dirname(target.absolute), { recursive: true });
          await writeFile(target.absolute, content);
          return `wrote ${Buffer.byteLength(content)} bytes to ${target.relative}`;
        } catch (error) {
          return failure(
            `cannot write '${target.relative}': ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
          );
        }
      },
    }),
    defineFunctionTool({
      name: "workspace__edit_file",
      description:
        "Replace an exact piece of text in a file: old_string must occur exactly once (or set replace_all).",
      inputSchema: z.strictObject({
        path: z.string(),
        old_string: z.string().min(1),
        new_string: z.string(),
        replace_all: z.boolean().optional(),
      }),
      async execute({ path, old_string: oldString, new_string: newString, replace_all: replaceAll }) {
        const target = await confined(path);
        if (isOutput(target)) return target;
        let text: string;
        try {
          text = await readFile(target.absolute, "utf8");
        } catch (error) {
          return failure(
            `cannot read '${target.relative}': ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
          );
        }
        const occurrences = text.split(oldString).length - 1;
        if (occurrences === 0) return failure(`old_string does not occur in ${target.relative}`);
        if (occurrences > 1 && replaceAll !== true) {
          return failure(
            `old_string occurs ${occurrences} times in ${target.relative}: make it unique or set replace_all`,
          );
        }
        await writeFile(target.absolute, text.split(oldString).join(newString));
        return `replaced ${occurrences} occurrence${occurrences === 1 ? "" : "s"} in ${target.relative}`;
      },
    }),
    defineFunctionTool({
      name: "workspace__delete_file",
      description: "Delete a file of the repository.",
      inputSchema: z.strictObject({ path: z.string() }),
      annotations: { destructiveHint: false },
      async execute({ path }) {
        const target = await confined(path);
        if (isOutput(target)) return target;
        try {
          await rm(target.absolute);
          return `deleted ${target.relative}`;
        } catch (error) {
          return failure(
            `cannot delete '${target.relative}': ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
          );
        }
      },
    }),
    defineFunctionTool({
      name: "workspace__list_files",
      description:
        "List the repository's files (tracked and untracked, not ignored), optionally under a folder.",
      inputSchema: z.strictObject({ path: z.string().optional() }),
      annotations: { readOnlyHint: true },
      async execute({ path }) {
        const target = await confined(path ?? ".");
        if (isOutput(target)) return target;
        const { stdout } = await gitCommand(
          ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", target.relative],
          { cwd: root },
        );
        const files = [...new Set(stdout.toString("utf8").split("\0"))].filter((file) => file !== "").sort();
        const shown = files.slice(0, maxListedFiles).join("\n");
        return files.length > maxListedFiles
          ? `${shown}\n[${files.length - maxListedFiles} more files]`
          : shown;
      },
    }),
    defineFunctionTool({
      name: "workspace__search",
      description:
        "Search the repository's text files for a regular expression (POSIX extended; fixed: true for plain text).",
      inputSchema: z.strictObject({
        pattern: z.string().min(1),
        path: z.string().optional(),
        fixed: z.boolean().optional(),
      }),
      annotations: { readOnlyHint: true },
      async execute({ pattern, path, fixed }) {
        const target = await confined(path ?? ".");
        if (isOutput(target)) return target;
        const { stdout, exitCode } = await gitCommand(
          [
            "grep",
            "-n",
            "-I",
            "--untracked",
            fixed === true ? "--fixed-strings" : "--extended-regexp",
            "-e",
            pattern,
            "--",
            target.relative,
          ],
          { cwd: root, acceptedExitCodes: [1, 128] },
        );
        if (exitCode === 128) return failure(`invalid pattern: ${pattern}`);
        const lines = stdout
          .toString("utf8")
          .split("\n")
          .filter((line) => line !== "");
        if (lines.length === 0) return "no matches";
        const shown = lines.slice(0, maxSearchLines).join("\n");
        return lines.length > maxSearchLines
          ? `${shown}\n[${lines.length - maxSearchLines} more lines]`
          : shown;
      },
    }),
  ];
  if (options.allowCommands) {
    tools.push(
      defineFunctionTool({
        name: "workspace__run_command",
        description:
          "Run a shell command (sh -c) in the repository's top folder; returns its exit code and output.",
        inputSchema: z.strictObject({ command: z.string().min(1) }),
        async execute({ command }, context) {
          const timeoutMs = Math.max(
            1,
            Math.min(defaultCommandTimeoutMs, options.commandTimeoutMs?.() ?? defaultCommandTimeoutMs),
          );
          const result = await runShellCommand(command, {
            cwd: root,
            timeoutMs,
            maxOutputBytes: maxCommandOutputBytes,
            signal: context.signal,
          });
          const status = result.timedOut
            ? `timed out after ${timeoutMs} ms`
            : `exit code ${result.exitCode ?? result.signal ?? "unknown"}`;
          const text = `${status}\n${result.output}`;
          return result.exitCode === 0 ? text : failure(text);
        },
      }),
    );
  }
  return tools;
}
