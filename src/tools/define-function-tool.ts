import type { ToolManifestEntry } from "../contract/execution-contract.js";
import { deepFreeze } from "../foundation/deep-freeze.js";
import type { RegisteredTool, ToolExecutionContext, ToolOutput } from "./tool-definition.js";

export interface FunctionToolDefinition {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the input object; validated by the pipeline before `execute` runs. */
  readonly inputSchema: Readonly<Record<string, unknown>>;
  /** MCP-style hints (`readOnlyHint`, `idempotentHint`, `destructiveHint`). */
  readonly annotations?: Readonly<Record<string, unknown>>;
  /** Returns the text the model sees, or a ToolOutput to report an error as data. */
  execute(
    input: Readonly<Record<string, unknown>>,
    context: ToolExecutionContext,
  ): Promise<string | ToolOutput>;
}

/** A tool implemented by a TypeScript function in the caller's process. */
export function defineFunctionTool(definition: FunctionToolDefinition): RegisteredTool {
  const manifest: ToolManifestEntry = deepFreeze({
    name: definition.name,
    description: definition.description,
    input_schema: { ...definition.inputSchema },
    source: { kind: "function", server: null, tool: definition.name },
    annotations: definition.annotations ? { ...definition.annotations } : null,
  });
  return {
    manifest,
    async execute(input, context) {
      const output = await definition.execute(input, context);
      return typeof output === "string" ? { text: output, isError: false } : output;
    },
  };
}
