import { basename, dirname, resolve } from "node:path";
import { type Document, isMap, isNode, isScalar, isSeq, LineCounter, parseDocument } from "yaml";
import { formatKeyPath, schemaIssues } from "../config/schema-issues.js";
import { CharterError } from "../foundation/charter-error.js";
import { deepFreeze } from "../foundation/deep-freeze.js";
import { readFileText } from "../foundation/read-file-text.js";
import { checkWorkflowDefinition, type WorkflowIssue } from "./check-workflow-definition.js";
import type { WorkflowDefinition } from "./workflow-definition.js";
import { type WorkflowFile, workflowDefinitionSchema } from "./workflow-definition-schema.js";

/** A workflow file, read and checked. */
export interface LoadedWorkflow {
  /** Absolute path of the file. */
  readonly path: string;
  /** Its directory: agent paths in steps are relative to it, and configuration is looked for from it. */
  readonly directory: string;
  readonly definition: WorkflowDefinition;
  /** The file's keys as read (the schema's output): what a workflow run records, and rebuilds its definition from. */
  readonly source: WorkflowFile;
}

const workflowFileName = /\.workflow\.(ya?ml|json)$/;

/**
 * Reads a workflow file (`*.workflow.yaml`, `.yml` or `.json`) and checks it whole: its schema, then what the
 * schema cannot say (checkWorkflowDefinition). Throws WORKFLOW_FILE_INVALID naming the file, the key (and its
 * line in YAML), the step and the problem, with every problem found in `details.issues`.
 */
export async function loadWorkflowFile(path: string): Promise<LoadedWorkflow> {
  const absolutePath = resolve(path);
  const text = await readFileText(absolutePath, "WORKFLOW_FILE_INVALID", "Cannot read workflow file");
  return parseWorkflowFile(text, absolutePath);
}

/** Parses and checks a workflow file's text; `path` names the file in errors and decides YAML or JSON. */
export function parseWorkflowFile(text: string, path: string): LoadedWorkflow {
  const format = workflowFileName.exec(basename(path))?.[1];
  if (format === undefined) {
    throw workflowFileInvalid(path, [
      {
        key: "",
        path: [],
        step: null,
        message: "a workflow file is named *.workflow.yaml, *.workflow.yml or *.workflow.json",
      },
    ]);
  }
  const source = text.replace(/^\uFEFF/, "");
  let data: unknown;
  let lineOf: (path: readonly (string | number)[]) => number | undefined = () => undefined;
  if (format === "json") {
    try {
      data = JSON.parse(source);
    } catch (error) {
      throw new CharterError(
        "WORKFLOW_FILE_INVALID",
        `Workflow file ${path}: not valid JSON: ${String(error)}`,
        {
          details: { file: path, key: "", reason: "syntax" },
        },
      );
    }
  } else {
    const lineCounter = new LineCounter();
    const document = parseDocument(source, { lineCounter, prettyErrors: false, uniqueKeys: true });
    const [syntaxError] = document.errors;
    if (syntaxError !== undefined) {
      const position = lineCounter.linePos(syntaxError.pos[0]);
      throw new CharterError(
        "WORKFLOW_FILE_INVALID",
        `Workflow file ${path}: invalid YAML at line ${position.line}, column ${position.col}: ${syntaxError.message}`,
        { details: { file: path, key: "", line: position.line, column: position.col, reason: "syntax" } },
      );
    }
    data = document.toJS({ maxAliasCount: 100 });
    lineOf = (keyPath) => lineOfPath(document, lineCounter, keyPath);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw workflowFileInvalid(path, [
      { key: "", path: [], step: null, message: "the file must hold a mapping of keys" },
    ]);
  }
  const parsed = workflowDefinitionSchema.safeParse(data);
  if (!parsed.success) {
    const steps = (data as { steps?: unknown }).steps;
    const issues = schemaIssues(parsed.error, [], workflowDefinitionSchema).map(
      (found): WorkflowIssue => ({
        key: found.key,
        path: found.path,
        step: stepIdAt(steps, found.path),
        message: found.message,
      }),
    );
    throw workflowFileInvalid(path, issues, lineOf);
  }
  const checked = checkWorkflowDefinition(parsed.data);
  if (!("definition" in checked)) throw workflowFileInvalid(path, checked.issues, lineOf);
  return deepFreeze({ path, directory: dirname(path), definition: checked.definition, source: parsed.data });
}

/** The id of the step a key path points into (`steps[2]...`), when the file gives it one. */
function stepIdAt(steps: unknown, path: readonly (string | number)[]): string | null {
  if (path[0] !== "steps" || typeof path[1] !== "number" || !Array.isArray(steps)) return null;
  const id = (steps[path[1]] as { id?: unknown } | undefined)?.id;
  return typeof id === "string" ? id : null;
}

/** WORKFLOW_FILE_INVALID for these problems of a file: the first in the message, all of them in `details.issues`. */
export function workflowFileInvalid(
  file: string,
  issues: readonly WorkflowIssue[],
  lineOf: (path: readonly (string | number)[]) => number | undefined = () => undefined,
): CharterError {
  const located = issues.map((found) => {
    const line = lineOf(found.path);
    return { ...found, ...(line === undefined ? {} : { line }) };
  });
  const first = located[0] as WorkflowIssue & { line?: number };
  const where = [
    first.key === "" ? null : first.key,
    first.line === undefined ? null : `line ${first.line}`,
    first.step === null ? null : `step "${first.step}"`,
  ].filter((part) => part !== null);
  const others =
    located.length > 1 ? ` (and ${located.length - 1} more problem${located.length > 2 ? "s" : ""})` : "";
  return new CharterError(
    "WORKFLOW_FILE_INVALID",
    `Workflow file ${file}: ${where.length > 0 ? `${where.join(", ")}: ` : ""}${first.message}${others}`,
    {
      details: {
        file,
        key: first.key,
        ...(first.step !== null ? { step: first.step } : {}),
        ...(first.line !== undefined ? { line: first.line } : {}),
        issues: located.map(({ path: _path, ...rest }) => ({ ...rest, key: rest.key || formatKeyPath([]) })),
      },
    },
  );
}

/** The line (1-based) of the key or item a key path points at. */
function lineOfPath(
  document: Document,
  lineCounter: LineCounter,
  path: readonly (string | number)[],
): number | undefined {
  for (let length = path.length; length > 0; length--) {
    const prefix = path.slice(0, length);
    const parent = length === 1 ? document.contents : document.getIn(prefix.slice(0, -1), true);
    const last = prefix[prefix.length - 1];
    let offset: number | undefined;
    if (isMap(parent)) {
      const pair = parent.items.find((item) => isScalar(item.key) && String(item.key.value) === String(last));
      offset = isScalar(pair?.key) ? pair.key.range?.[0] : undefined;
    } else if (isSeq(parent) && typeof last === "number") {
      const item = parent.items[last];
      offset = isNode(item) ? item.range?.[0] : undefined;
    }
    // A key that is not in the file (a missing one) is placed at the nearest enclosing key that is.
    if (offset !== undefined) return lineCounter.linePos(offset).line;
  }
  return undefined;
}
