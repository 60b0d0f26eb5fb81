/** One `{{ ... }}` placeholder of a template: its text as written and the dotted path inside it. */
export interface TemplateReference {
  readonly text: string;
  readonly path: readonly string[];
}

/** What a reference reads, once classified (see `classifyTemplateReference`). */
export type TemplateSource =
  | { readonly kind: "input"; readonly path: readonly string[] }
  | { readonly kind: "report"; readonly stepId: string }
  | { readonly kind: "json"; readonly stepId: string; readonly path: readonly string[] }
  | { readonly kind: "memory"; readonly key: string; readonly path: readonly string[] };

const placeholder = /\{\{([^{}]*)\}\}/g;
const segmentPattern = /^[A-Za-z0-9_-]+$/;

/**
 * The placeholders of a template string, in order, or the problem that makes it unreadable: a `{{` never closed,
 * an empty placeholder, or a path segment that is not letters, digits, `_` or `-`.
 */
export function templateReferences(template: string): {
  readonly references: TemplateReference[];
  readonly problem: string | null;
} {
  const references: TemplateReference[] = [];
  for (const match of template.matchAll(placeholder)) {
    const text = match[0];
    const expression = (match[1] ?? "").trim();
    const path = expression.split(".");
    if (expression === "" || !path.every((segment) => segmentPattern.test(segment))) {
      return {
        references,
        problem: `${text} is not a template reference (write {{input.<key>}}, {{steps.<id>.report}}, {{steps.<id>.json.<path>}} or {{memory.<key>}})`,
      };
    }
    references.push({ text, path });
  }
  const rest = template.replace(placeholder, "");
  if (rest.includes("{{")) {
    return { references, problem: `a "{{" is never closed with "}}"` };
  }
  return { references, problem: null };
}

/** What a reference reads, or the problem with it. */
export function classifyTemplateReference(reference: TemplateReference): TemplateSource | string {
  const [root, name, field, ...rest] = reference.path;
  if (root === "input") return { kind: "input", path: reference.path.slice(1) };
  if (root === "memory" && name !== undefined)
    return { kind: "memory", key: name, path: reference.path.slice(2) };
  if (root === "steps" && name !== undefined) {
    if (field === "report" && rest.length === 0) return { kind: "report", stepId: name };
    if (field === "json") return { kind: "json", stepId: name, path: rest };
    return `${reference.text}: a step is read as steps.<id>.report or steps.<id>.json.<path>`;
  }
  return `${reference.text} reads nothing a workflow has: a template reads input, steps.<id>.report, steps.<id>.json.<path> or memory.<key>`;
}
