import { type ZodType, z } from "zod";
import type { ToolManifestEntry } from "../contract/execution-contract.js";
import { CharterError } from "../foundation/charter-error.js";
import { deepFreeze } from "../foundation/deep-freeze.js";
import type { RegisteredTool, ToolExecutionContext, ToolOutput } from "./tool-definition.js";

export interface FunctionToolDefinition<Input = Readonly<Record<string, unknown>>> {
  readonly name: string;
  readonly description: string;
  /**
   * The input: a zod object schema (converted to JSON Schema for the model and the pipeline; the parsed value,
   * with zod's defaults and transforms applied, is what `execute` receives) or a JSON Schema object.
   */
  readonly inputSchema: ZodType<Input> | Readonly<Record<string, unknown>>;
  /** MCP-style hints (`readOnlyHint`, `idempotentHint`, `destructiveHint`). */
  readonly annotations?: Readonly<Record<string, unknown>>;
  /** Returns the text the model sees, or a ToolOutput to report an error as data. */
  execute(input: Input, context: ToolExecutionContext): Promise<string | ToolOutput>;
}

function isZodSchema(value: unknown): value is ZodType {
  return typeof value === "object" && value !== null && "_zod" in value;
}

// A zod 3 schema has `_def` and `parse` but no `_zod`. Taken for a JSON Schema it would fail far from here, with
// a DataCloneError when the contract is frozen, so it is named at the call that received it.
function isOtherZodSchema(value: unknown): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    !("_zod" in value) &&
    "_def" in value &&
    typeof (value as { parse?: unknown }).parse === "function"
  );
}

/** A tool implemented by a TypeScript function in the caller's process. */
export function defineFunctionTool<Input = Readonly<Record<string, unknown>>>(
  definition: FunctionToolDefinition<Input>,
): RegisteredTool {
  const schema = definition.inputSchema;
  if (isOtherZodSchema(schema)) {
    throw new CharterError(
      "ZOD_VERSION_UNSUPPORTED",
      `Tool "${definition.name}": its inputSchema is a schema of zod 3, and Charter reads zod 4 schemas. ` +
        'Install zod 4 (`npm install zod@4`) and build the schema with it (`import { z } from "zod"`), or give ' +
        "the input as a JSON Schema object.",
      { details: { tool: definition.name, key: "inputSchema", supported: "zod ^4" } },
    );
  }
  const zodSchema = isZodSchema(schema) ? schema : null;
  const inputSchema =
    zodSchema !== null
      ? (z.toJSONSchema(zodSchema, { io: "input" }) as Record<string, unknown>)
      : { ...schema };
  const manifest: ToolManifestEntry = deepFreeze({
    name: definition.name,
    description: definition.description,
    input_schema: inputSchema,
    source: { kind: "function", server: null, tool: definition.name },
    annotations: definition.annotations ? { ...definition.annotations } : null,
  });
  return {
    manifest,
    async execute(input, context) {
      // The pipeline has validated the input against the JSON Schema; zod then applies defaults and transforms.
      const value = (zodSchema !== null ? zodSchema.parse(input) : input) as Input;
      const output = await definition.execute(value, context);
      return typeof output === "string" ? { text: output, isError: false } : output;
    },
  };
}
