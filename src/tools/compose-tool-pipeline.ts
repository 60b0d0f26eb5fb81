import { CharterError } from "../foundation/charter-error.js";
import { describeError } from "./describe-error.js";
import { failedToolResult } from "./failed-tool-result.js";
import { freezeToolResult, type ToolExecutionResult } from "./tool-execution-result.js";
import type { ToolCallContext, ToolPipeline, ToolStage, ToolTerminal } from "./tool-pipeline.js";

/**
 * Composes stages (outermost first) and a terminal into one pipeline. Whatever a stage does, including
 * throwing, calling `next` twice or returning nothing usable, the pipeline resolves with a frozen result.
 */
export function composeToolPipeline(
  stages: readonly ToolStage[],
  terminal: ToolTerminal = noStageAnswered,
): ToolPipeline {
  const chain = [...stages];
  return async function runToolPipeline(call) {
    let furthest = -1;
    const dispatch = (index: number): Promise<ToolExecutionResult> => {
      if (index <= furthest) {
        throw new CharterError("INTERNAL_ERROR", `tool stage ${index - 1} called next() more than once`);
      }
      furthest = index;
      const stage = chain[index];
      return stage === undefined ? terminal(call) : stage(call, () => dispatch(index + 1));
    };
    try {
      const result = await dispatch(0);
      if (!isToolExecutionResult(result)) {
        return failedToolResult(
          call,
          "TOOL_EXECUTION_FAILED",
          "internal error: a tool stage returned no result",
        );
      }
      return Object.isFrozen(result) ? result : freezeToolResult(result);
    } catch (error) {
      return failedToolResult(call, "TOOL_EXECUTION_FAILED", `internal error: ${describeError(error)}`);
    }
  };
}

function noStageAnswered(call: ToolCallContext): Promise<ToolExecutionResult> {
  return Promise.resolve(
    failedToolResult(call, "TOOL_EXECUTION_FAILED", "internal error: no tool stage produced a result"),
  );
}

function isToolExecutionResult(value: unknown): value is ToolExecutionResult {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Partial<ToolExecutionResult>;
  return typeof candidate.content === "string" && typeof candidate.status === "string";
}
