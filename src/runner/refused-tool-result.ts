import type { ToolInvocation } from "../contract/agent-message.js";
import type { ErrorCode } from "../foundation/error-codes.js";
import { freezeToolResult, type ToolExecutionResult } from "../tools/tool-execution-result.js";

/**
 * The result of a tool call a guard refused before it ran (an approval still needed or denied, an outcome unknown,
 * a permission the run lacks, a rate limit): failed, never executed, nothing measured, `content` telling the model
 * why. Every guard answers with this one shape, so the session and the stores treat all refusals alike. `source`
 * is the tool's, or a built-in's when the guard answers for itself.
 */
export function refusedToolResult(
  call: ToolInvocation,
  code: ErrorCode,
  content: string,
  source: { readonly kind: string; readonly server: string | null } = { kind: "builtin", server: null },
): ToolExecutionResult {
  return freezeToolResult({
    call_id: call.id,
    tool_name: call.name,
    status: "failed",
    error_code: code,
    content,
    executed: false,
    latency_ms: 0,
    characters_in: 0,
    characters_out: content.length,
    handle: null,
    source: { kind: source.kind, server: source.server, tool: call.name },
  });
}
