import { formatKeyPath } from "../config/schema-issues.js";
import { CharterError } from "../foundation/charter-error.js";
import { findDependencyCycle } from "../foundation/find-dependency-cycle.js";
import { nearestName } from "../foundation/nearest-name.js";
import { compileJsonSchema } from "../tools/compile-json-schema.js";
import { classifyTemplateReference, templateReferences } from "./template-references.js";
import type { JsonValue, WorkflowAction, WorkflowDefinition, WorkflowStep } from "./workflow-definition.js";
import type { WorkflowFile, WorkflowFileStep } from "./workflow-definition-schema.js";

type KeyPath = readonly (string | number)[];

/** One problem of a workflow file: the key it is about (`steps[1].dependsOn[0]`), its step, and what is wrong. */
export interface WorkflowIssue {
  readonly key: string;
  /** The same place as segments (what a file's line is found from). */
  readonly path: KeyPath;
  readonly step: string | null;
  readonly message: string;
}

function issue(path: KeyPath, step: string | null, message: string): WorkflowIssue {
  return { key: formatKeyPath(path), path, step, message };
}

/** Where a template is read from, which decides the steps it may name. */
type TemplateScope =
  | { readonly kind: "step"; readonly step: WorkflowFileStep }
  | { readonly kind: "compensation"; readonly step: WorkflowFileStep }
  | { readonly kind: "output" };

type ActionFields = {
  readonly agent?: string | undefined;
  readonly prompt?: string | undefined;
  readonly tool?:
    | { readonly name: string; readonly arguments?: Record<string, unknown> | undefined }
    | undefined;
};

/**
 * What the schema cannot check: one action per step (an agent with a prompt, or a tool), unique step ids and
 * memory keys, dependencies that exist, no cycle (named), array order under `maxConcurrency: 1`, templates that
 * read only the input, the step's own dependencies (direct or not) and their memory keys, and an `input` schema
 * that compiles. Returns the checked definition with defaults filled in, or every problem found.
 */
export function checkWorkflowDefinition(
  file: WorkflowFile,
):
  | { readonly definition: WorkflowDefinition; readonly issues: readonly [] }
  | { readonly issues: WorkflowIssue[] } {
  const issues: WorkflowIssue[] = [];
  const maxConcurrency = file.maxConcurrency ?? 1;
  const firstIndex = new Map<string, number>();
  file.steps.forEach((step, index) => {
    const earlier = firstIndex.get(step.id);
    if (earlier !== undefined)
      issues.push(
        issue(["steps", index, "id"], step.id, `step id "${step.id}" is already used by steps[${earlier}]`),
      );
    else firstIndex.set(step.id, index);
  });
  const ids = [...firstIndex.keys()];

  const memoryOwner = new Map<string, string>();
  file.steps.forEach((step, index) => {
    const problem = actionProblem(step, "step");
    if (problem !== null) issues.push(issue(["steps", index, problem.key], step.id, problem.message));
    if (step.compensate !== undefined) {
      const compensation = actionProblem(step.compensate, "compensation");
      if (compensation !== null)
        issues.push(issue(["steps", index, "compensate", compensation.key], step.id, compensation.message));
    }
    const seen = new Set<string>();
    (step.dependsOn ?? []).forEach((dependency, position) => {
      const key = ["steps", index, "dependsOn", position];
      if (dependency === step.id) {
        issues.push(issue(key, step.id, `step "${step.id}" depends on itself`));
      } else if (!firstIndex.has(dependency)) {
        const suggestion = nearestName(dependency, ids);
        issues.push(
          issue(
            key,
            step.id,
            `"${dependency}" names no step${suggestion === undefined ? "" : `; did you mean ${suggestion}?`}`,
          ),
        );
      } else if (maxConcurrency === 1 && (firstIndex.get(dependency) ?? 0) > index) {
        issues.push(
          issue(
            key,
            step.id,
            `"${dependency}" comes later in steps: with maxConcurrency 1 steps run in array order, so a step may depend only on steps before it`,
          ),
        );
      }
      if (seen.has(dependency))
        issues.push(issue(key, step.id, `"${dependency}" is listed twice in dependsOn`));
      seen.add(dependency);
    });
    if (step.saveAs !== undefined) {
      const owner = memoryOwner.get(step.saveAs);
      if (owner !== undefined)
        issues.push(
          issue(
            ["steps", index, "saveAs"],
            step.id,
            `memory key "${step.saveAs}" is already saved by step "${owner}"`,
          ),
        );
      else memoryOwner.set(step.saveAs, step.id);
    }
  });

  const cycle = findDependencyCycle(
    file.steps.map((step) => ({ id: step.id, dependsOn: step.dependsOn ?? [] })),
  );
  if (cycle !== null) {
    const first = cycle[0] as string;
    issues.push(
      issue(
        ["steps", firstIndex.get(first) ?? 0, "dependsOn"],
        first,
        `dependency cycle: ${cycle.join(" -> ")}`,
      ),
    );
  } else {
    // Templates are checked only against a graph without a cycle (a step's dependencies are undefined otherwise).
    const ancestors = ancestorsOf(file.steps);
    const check = (template: string, key: KeyPath, scope: TemplateScope) =>
      checkTemplate(template, key, scope, { ids, ancestors, memoryOwner, issues });
    file.steps.forEach((step, index) => {
      if (step.prompt !== undefined) check(step.prompt, ["steps", index, "prompt"], { kind: "step", step });
      if (step.tool?.arguments !== undefined)
        forEachString(step.tool.arguments, ["steps", index, "tool", "arguments"], (text, path) =>
          check(text, path, { kind: "step", step }),
        );
      const compensation = step.compensate;
      if (compensation?.prompt !== undefined)
        check(compensation.prompt, ["steps", index, "compensate", "prompt"], { kind: "compensation", step });
      if (compensation?.tool?.arguments !== undefined)
        forEachString(
          compensation.tool.arguments,
          ["steps", index, "compensate", "tool", "arguments"],
          (text, path) => check(text, path, { kind: "compensation", step }),
        );
    });
    if (file.output !== undefined)
      forEachString(file.output, ["output"], (text, path) => check(text, path, { kind: "output" }));
  }

  if (file.input !== undefined) {
    try {
      compileJsonSchema(file.input);
    } catch (error) {
      const reason = CharterError.isInstance(error)
        ? String(error.details.reason ?? error.message)
        : String(error);
      issues.push(issue(["input"], null, `the input schema cannot be compiled: ${reason}`));
    }
  }

  if (issues.length > 0) return { issues };
  return {
    definition: {
      id: file.id,
      description: file.description ?? null,
      input: (file.input as WorkflowDefinition["input"] | undefined) ?? null,
      maxConcurrency,
      failureStrategy: file.failureStrategy ?? "failFast",
      steps: file.steps.map(
        (step, index): WorkflowStep => ({
          id: step.id,
          index,
          description: step.description ?? null,
          action: actionOf(step) as WorkflowAction,
          dependsOn: step.dependsOn ?? [],
          saveAs: step.saveAs ?? null,
          compensate: step.compensate === undefined ? null : actionOf(step.compensate),
        }),
      ),
      output: (file.output as JsonValue | undefined) ?? null,
    },
    issues: [],
  };
}

function actionOf(action: ActionFields): WorkflowAction | null {
  if (action.agent !== undefined && action.prompt !== undefined)
    return { kind: "agent", agent: action.agent, prompt: action.prompt };
  if (action.tool !== undefined)
    return {
      kind: "tool",
      name: action.tool.name,
      arguments: (action.tool.arguments ?? {}) as { [key: string]: JsonValue },
    };
  return null;
}

function actionProblem(action: ActionFields, what: string): { key: string; message: string } | null {
  const hasAgent = action.agent !== undefined;
  const hasTool = action.tool !== undefined;
  if (hasAgent && hasTool)
    return { key: "tool", message: `a ${what} runs an agent or calls a tool, not both` };
  if (!hasAgent && !hasTool)
    return { key: "agent", message: `a ${what} needs an agent (with a prompt) or a tool` };
  if (hasAgent && action.prompt === undefined)
    return { key: "prompt", message: `a ${what} that runs an agent needs a prompt` };
  if (hasTool && action.prompt !== undefined)
    return { key: "prompt", message: `a ${what} that calls a tool takes arguments, not a prompt` };
  return null;
}

/** Every step's dependencies, direct or not (the graph has no cycle). */
function ancestorsOf(steps: readonly WorkflowFileStep[]): Map<string, Set<string>> {
  const direct = new Map(steps.map((step) => [step.id, step.dependsOn ?? []]));
  const result = new Map<string, Set<string>>();
  function collect(id: string): Set<string> {
    const known = result.get(id);
    if (known !== undefined) return known;
    const all = new Set<string>();
    result.set(id, all);
    for (const dependency of direct.get(id) ?? []) {
      if (!direct.has(dependency)) continue;
      all.add(dependency);
      for (const ancestor of collect(dependency)) all.add(ancestor);
    }
    return all;
  }
  for (const step of steps) collect(step.id);
  return result;
}

function checkTemplate(
  template: string,
  key: KeyPath,
  scope: TemplateScope,
  known: {
    readonly ids: readonly string[];
    readonly ancestors: ReadonlyMap<string, ReadonlySet<string>>;
    readonly memoryOwner: ReadonlyMap<string, string>;
    readonly issues: WorkflowIssue[];
  },
): void {
  const step = scope.kind === "output" ? null : scope.step.id;
  const report = (message: string) => known.issues.push(issue(key, step, message));
  const parsed = templateReferences(template);
  if (parsed.problem !== null) report(parsed.problem);
  // What a template may read: a step's own dependencies (direct or not); a compensation also the step it undoes;
  // the output every step.
  const readable = (id: string) =>
    scope.kind === "output" ||
    (known.ancestors.get(scope.step.id)?.has(id) ?? false) ||
    (scope.kind === "compensation" && id === scope.step.id);
  const where = scope.kind === "compensation" ? `the compensation of step "${step}"` : `step "${step}"`;
  for (const reference of parsed.references) {
    const source = classifyTemplateReference(reference);
    if (typeof source === "string") {
      report(source);
    } else if (source.kind === "report" || source.kind === "json") {
      if (!known.ids.includes(source.stepId)) {
        const suggestion = nearestName(source.stepId, known.ids);
        report(
          `${reference.text} names no step "${source.stepId}"${suggestion === undefined ? "" : `; did you mean ${suggestion}?`}`,
        );
      } else if (!readable(source.stepId)) {
        report(
          `${reference.text}: ${where} does not depend on "${source.stepId}" (add it to dependsOn to read its result)`,
        );
      }
    } else if (source.kind === "memory") {
      const owner = known.memoryOwner.get(source.key);
      if (owner === undefined) {
        const suggestion = nearestName(source.key, [...known.memoryOwner.keys()]);
        report(
          `${reference.text}: no step saves "${source.key}" (saveAs)${suggestion === undefined ? "" : `; did you mean ${suggestion}?`}`,
        );
      } else if (!readable(owner)) {
        report(
          `${reference.text}: "${source.key}" is saved by step "${owner}", which ${where} does not depend on (add it to dependsOn)`,
        );
      }
    }
  }
}

/** Calls `visit` with every string in a JSON value and its key path. */
function forEachString(value: unknown, path: KeyPath, visit: (text: string, path: KeyPath) => void): void {
  if (typeof value === "string") visit(value, path);
  else if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) forEachString(item, [...path, index], visit);
  } else if (value !== null && typeof value === "object")
    for (const [key, item] of Object.entries(value)) forEachString(item, [...path, key], visit);
}
