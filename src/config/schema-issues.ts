import type { z } from "zod";

/** One problem found by a schema, with the key path it is about. */
export interface SchemaIssue {
  /** Human-readable key path, for example `providers.local.models["gpt-4.1"].contextWindow` or `models[0]`. */
  readonly key: string;
  /** The same path as segments, unambiguous when a key contains a dot. */
  readonly path: readonly (string | number)[];
  readonly message: string;
  /** True when the problem is a key the schema does not know. */
  readonly unknownKey: boolean;
}

const plainSegment = /^[A-Za-z_$][\w$-]*$/;

export function formatKeyPath(path: readonly (string | number)[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (plainSegment.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** Flattens zod issues so that each unknown key is its own issue, named by its full path. */
export function schemaIssues(error: z.ZodError, prefix: readonly (string | number)[] = []): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  for (const issue of error.issues) {
    const base = [
      ...prefix,
      ...issue.path.map((segment) => (typeof segment === "number" ? segment : String(segment))),
    ];
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        const path = [...base, key];
        issues.push({ key: formatKeyPath(path), path, message: `unknown key "${key}"`, unknownKey: true });
      }
    } else {
      issues.push({ key: formatKeyPath(base), path: base, message: issue.message, unknownKey: false });
    }
  }
  return issues;
}

export function describeSchemaIssues(issues: readonly SchemaIssue[]): string {
  return issues.map((issue) => `${issue.key || "(top level)"}: ${issue.message}`).join("; ");
}
