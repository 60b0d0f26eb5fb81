import type { FailureStrategy } from "./workflow-definition-schema.js";

/** JSON as a workflow file holds it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** What a step (or its compensation) does: an agent run on a prompt, or one tool call without a model. */
export type WorkflowAction =
  | { readonly kind: "agent"; readonly agent: string; readonly prompt: string }
  | {
      readonly kind: "tool";
      readonly name: string;
      readonly arguments: { readonly [key: string]: JsonValue };
    };

export interface WorkflowStep {
  readonly id: string;
  /** Its position in the file's `steps` array (0-based). */
  readonly index: number;
  readonly description: string | null;
  readonly action: WorkflowAction;
  readonly dependsOn: readonly string[];
  readonly saveAs: string | null;
  readonly compensate: WorkflowAction | null;
}

/**
 * A checked workflow: every default filled in, each step's action in one shape. This is what a workflow run
 * records (and hashes) as its definition, so a resume runs exactly what the run started with.
 */
export interface WorkflowDefinition {
  readonly id: string;
  readonly description: string | null;
  readonly input: { readonly [key: string]: JsonValue } | null;
  readonly maxConcurrency: number;
  readonly failureStrategy: FailureStrategy;
  readonly steps: readonly WorkflowStep[];
  readonly output: JsonValue | null;
}
