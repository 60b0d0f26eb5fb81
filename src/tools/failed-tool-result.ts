import type { ErrorCode } from "../foundation/error-codes.js";
import { freezeToolResult, type ToolExecutionResult } from "./tool-execution-result.js";
import type { ToolCallContext } from "./tool-pipeline.js";

const unknownSource = (tool: string) => ({ kind: "unknown", server: null, tool });

/**
 * A frozen failed result for a call. The model sees `(tool failed: <reason>)` (seed 000 §8); the stable
 * `errorCode` is what the runtime and tests branch on.
 */
export function failedToolResult(
  call: ToolCallContext,
  errorCode: ErrorCode,
  reason: string,
  options: { executed?: boolean } = {},
): ToolExecutionResult {
  return freezeToolResult({
    call_id: call.invocation.id,
    tool_name: call.invocation.name,
    status: "failed",
    error_code: errorCode,
    content: `(tool failed: ${reason})`,
    executed: options.executed ?? false,
    latency_ms: 0,
    characters_in: 0,
    characters_out: 0,
    handle: null,
    source: call.tool?.manifest.source ?? unknownSource(call.invocation.name),
  });
}
