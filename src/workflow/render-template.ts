import { canonicalJson } from "../foundation/canonical-json.js";
import { CharterError } from "../foundation/charter-error.js";
import {
  classifyTemplateReference,
  type TemplateReference,
  templateReferences,
} from "./template-references.js";
import type { JsonValue } from "./workflow-definition.js";

/** What templates read while a workflow runs. */
export interface TemplateScope {
  readonly input: unknown;
  /** Completed steps' outputs, by step id. */
  readonly outputs: Readonly<Record<string, { readonly report: string; readonly json?: unknown }>>;
  readonly memory: Readonly<Record<string, unknown>>;
}

/** A template as text: each placeholder replaced by its value (a string as it is, anything else as JSON). */
export function renderTemplate(template: string, scope: TemplateScope): string {
  const { references } = templateReferences(template);
  let text = template;
  for (const reference of references) {
    const value = resolveReference(reference, scope);
    text = text.replace(reference.text, () => (typeof value === "string" ? value : canonicalJson(value)));
  }
  return text;
}

/**
 * A JSON value whose strings are templates (a tool step's arguments, the output): a string that is one placeholder
 * alone takes the value itself (a number stays a number), any other string is rendered as text.
 */
export function renderTemplateValue(value: JsonValue, scope: TemplateScope): JsonValue {
  if (typeof value === "string") {
    const { references } = templateReferences(value);
    const [only] = references;
    if (references.length === 1 && only !== undefined && value.trim() === only.text)
      return resolveReference(only, scope) as JsonValue;
    return renderTemplate(value, scope);
  }
  if (Array.isArray(value)) return value.map((item) => renderTemplateValue(item, scope));
  if (value !== null && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, renderTemplateValue(item, scope)]),
    );
  return value;
}

function resolveReference(reference: TemplateReference, scope: TemplateScope): unknown {
  const source = classifyTemplateReference(reference);
  const unresolved = (reason: string) =>
    new CharterError("WORKFLOW_TEMPLATE_UNRESOLVED", `${reference.text}: ${reason}`, {
      details: { reference: reference.text, reason },
    });
  if (typeof source === "string") throw unresolved(source);
  switch (source.kind) {
    case "input":
      return walk(scope.input, source.path, "the input", unresolved);
    case "memory": {
      if (!Object.hasOwn(scope.memory, source.key)) throw unresolved(`the memory holds no "${source.key}"`);
      return walk(scope.memory[source.key], source.path, `memory.${source.key}`, unresolved);
    }
    case "report": {
      const output = scope.outputs[source.stepId];
      if (output === undefined) throw unresolved(`step "${source.stepId}" has not completed`);
      return output.report;
    }
    case "json": {
      const output = scope.outputs[source.stepId];
      if (output === undefined) throw unresolved(`step "${source.stepId}" has not completed`);
      if (output.json === undefined) throw unresolved(`the report of step "${source.stepId}" is not JSON`);
      return walk(output.json, source.path, `steps.${source.stepId}.json`, unresolved);
    }
  }
}

/** The value at a path of keys and array indices. */
function walk(
  value: unknown,
  path: readonly string[],
  what: string,
  unresolved: (reason: string) => CharterError,
): unknown {
  let current = value;
  let at = what;
  for (const segment of path) {
    if (Array.isArray(current) && /^\d+$/.test(segment) && Number(segment) < current.length) {
      current = current[Number(segment)];
    } else if (
      current !== null &&
      typeof current === "object" &&
      !Array.isArray(current) &&
      Object.hasOwn(current, segment)
    ) {
      current = (current as Record<string, unknown>)[segment];
    } else {
      throw unresolved(`${at} has no "${segment}"`);
    }
    at = `${at}.${segment}`;
  }
  if (current === undefined) throw unresolved(`${at} has no value`);
  return current;
}
