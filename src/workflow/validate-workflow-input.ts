import { CharterError } from "../foundation/charter-error.js";
import { compileJsonSchema } from "../tools/compile-json-schema.js";
import type { WorkflowDefinition } from "./workflow-definition.js";

/**
 * Checks a workflow's input against its `input` JSON Schema before any step runs. A workflow without an
 * `input` schema takes any JSON input (an empty object when none is given). Throws WORKFLOW_INPUT_INVALID naming
 * each problem by its path in the input.
 */
export function validateWorkflowInput(definition: WorkflowDefinition, input: unknown, file: string): void {
  if (definition.input === null) return;
  const problems = compileJsonSchema(definition.input)(input);
  if (problems === null) return;
  throw new CharterError(
    "WORKFLOW_INPUT_INVALID",
    `the input of workflow ${definition.id} does not match its input schema (${file}): ${problems.join("; ")}`,
    { details: { file, workflow: definition.id, key: "input", problems } },
  );
}
