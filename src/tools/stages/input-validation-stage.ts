import { CharterError } from "../../foundation/charter-error.js";
import { compileJsonSchema, type JsonSchemaValidator } from "../compile-json-schema.js";
import { failedToolResult } from "../failed-tool-result.js";
import { requireLookedUpTool } from "../require-looked-up-tool.js";
import type { RegisteredTool } from "../tool-definition.js";
import type { ToolStage } from "../tool-pipeline.js";

/** A compiled validator, or why the tool's own schema could not be compiled. Compiled once per tool. */
type CompiledInput = { readonly validate: JsonSchemaValidator } | { readonly schemaError: string };

const compiled = new WeakMap<RegisteredTool, CompiledInput>();

function compiledInputOf(tool: RegisteredTool): CompiledInput {
  let entry = compiled.get(tool);
  if (entry === undefined) {
    try {
      entry = { validate: compileJsonSchema(tool.manifest.input_schema) };
    } catch (error) {
      const reason = CharterError.isInstance(error)
        ? String(error.details.reason ?? error.message)
        : String(error);
      entry = { schemaError: reason };
    }
    compiled.set(tool, entry);
  }
  return entry;
}

/**
 * Validates the arguments against the tool's input schema before anything runs (seed 003 INV-TOOL-001).
 * Invalid arguments are a failed result listing every problem with its path; the tool is not called.
 */
export const inputValidationStage: ToolStage = (call, next) => {
  const tool = requireLookedUpTool(call, "inputValidationStage");
  const entry = compiledInputOf(tool);
  if ("schemaError" in entry) {
    return Promise.resolve(
      failedToolResult(
        call,
        "TOOL_INPUT_INVALID",
        `the tool's input schema cannot be used: ${entry.schemaError}`,
      ),
    );
  }
  const problems = entry.validate(call.invocation.arguments);
  if (problems !== null) {
    return Promise.resolve(
      failedToolResult(call, "TOOL_INPUT_INVALID", `invalid arguments: ${problems.join("; ")}`),
    );
  }
  return next();
};
