import type { z } from "zod";
import { nearestName } from "../foundation/nearest-name.js";
import { knownKeysAt } from "./known-keys-at.js";

/** One problem found by a schema, with the key path it is about. */
export interface SchemaIssue {
  /** Human-readable key path, for example `providers.local.models["gpt-4.1"].contextWindow` or `models[0]`. */
  readonly key: string;
  /** The same path as segments, unambiguous when a key contains a dot. */
  readonly path: readonly (string | number)[];
  readonly message: string;
  /** True when the problem is a key the schema does not know. */
  readonly unknownKey: boolean;
  /** For an unknown key: the known key at the same place it was most likely meant to be, when one is close. */
  readonly suggestion?: string;
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

/**
 * Flattens zod issues so that each unknown key is its own issue, named by its full path. Given the schema that
 * failed, an unknown key also names the nearest key the schema accepts at that place (`did you mean maxTurns?`).
 */
export function schemaIssues(
  error: z.ZodError,
  prefix: readonly (string | number)[] = [],
  schema?: z.ZodType,
): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  for (const issue of error.issues) {
    const base = [
      ...prefix,
      ...issue.path.map((segment) => (typeof segment === "number" ? segment : String(segment))),
    ];
    if (issue.code === "unrecognized_keys") {
      const known =
        schema === undefined
          ? []
          : knownKeysAt(
              schema,
              issue.path.map((segment) => (typeof segment === "number" ? segment : String(segment))),
            );
      for (const key of issue.keys) {
        const path = [...base, key];
        const suggestion = nearestName(key, known);
        issues.push({
          key: formatKeyPath(path),
          path,
          message: `unknown key "${key}"${suggestion === undefined ? "" : `; did you mean ${suggestion}?`}`,
          unknownKey: true,
          ...(suggestion !== undefined ? { suggestion } : {}),
        });
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
