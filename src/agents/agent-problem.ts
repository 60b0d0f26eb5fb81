import type { SchemaIssue } from "../config/schema-issues.js";
import { CharterError } from "../foundation/charter-error.js";
import type { ErrorCode } from "../foundation/error-codes.js";

/** One thing wrong with one agent file or agents folder, as `charter agents validate` lists it. */
export interface AgentProblem {
  /** The agent file (or, for a folder that cannot be read, the folder). */
  readonly file: string;
  /** The frontmatter key the problem is about (`keywords[1]`, `id`), or null when it is about the whole file. */
  readonly key: string | null;
  /** The line in the file, when known. */
  readonly line: number | null;
  readonly code: ErrorCode;
  readonly message: string;
}

/**
 * The problems a typed error stands for: an agent file's error lists every schema issue it found (each its own
 * problem), any other error is one problem.
 */
export function problemsFromError(error: unknown, file: string): AgentProblem[] {
  if (!CharterError.isInstance(error)) {
    return [
      {
        file,
        key: null,
        line: null,
        code: "INTERNAL_ERROR",
        message: error instanceof Error ? error.message : String(error),
      },
    ];
  }
  const details = error.details as {
    file?: unknown;
    key?: unknown;
    line?: unknown;
    issues?: readonly (SchemaIssue & { readonly line?: number })[];
  };
  const where = typeof details.file === "string" ? details.file : file;
  const firstLine = typeof details.line === "number" ? details.line : null;
  const issues = Array.isArray(details.issues) ? details.issues : [];
  if (issues.length === 0) {
    return [
      {
        file: where,
        key: typeof details.key === "string" && details.key !== "" ? details.key : null,
        line: firstLine,
        code: error.code,
        message: error.message,
      },
    ];
  }
  return issues.map((issue, index) => ({
    file: where,
    key: issue.key === "" ? null : issue.key,
    line: issue.line ?? (index === 0 ? firstLine : null),
    code: error.code,
    message: issue.message,
  }));
}

/** The error a registry with problems is refused with: the first problem's, naming how many more there are. */
export function registryProblemError(problems: readonly AgentProblem[]): CharterError {
  const first = problems[0] as AgentProblem;
  const more =
    problems.length > 1
      ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? "s" : ""}: charter agents validate lists them all)`
      : "";
  const where = `${first.file}${first.line === null ? "" : `:${first.line}`}`;
  const message = first.message.includes(first.file) ? first.message : `${where}: ${first.message}`;
  return new CharterError(first.code, `${message}${more}`, {
    details: { file: first.file, key: first.key, line: first.line, problems },
  });
}
