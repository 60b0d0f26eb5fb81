import { storeBinaryResources } from "../store-binary-resources.js";
import { freezeToolResult, type ToolExecutionResult } from "../tool-execution-result.js";
import { toolOutputHandleMessage } from "../tool-output-handle-message.js";
import type { ToolCallContext, ToolStage } from "../tool-pipeline.js";
import { truncateToBytes } from "../truncate-to-bytes.js";

function exceeds(content: string, maxBytes: number): boolean {
  // A UTF-16 code unit is one to three UTF-8 bytes: most outputs are decided without counting bytes.
  if (content.length * 3 <= maxBytes) return false;
  if (content.length > maxBytes) return true;
  return Buffer.byteLength(content, "utf8") > maxBytes;
}

/** `tool_output` reads stored outputs; storing its answer again would only hand out another handle. */
function readsStoredOutputs(call: ToolCallContext): boolean {
  const source = call.tool?.manifest.source;
  return source?.kind === "builtin" && source.tool === "tool_output";
}

/**
 * Turns what the tool produced into what the model sees (seed 000 §3, seed 002 V2.1 tool output budget).
 * A successful output over `tool_output_budget.max_bytes_per_call` bytes is stored behind a handle and replaced
 * by the handle message. When it cannot be stored (no store, the store failed, or it is `tool_output`'s own
 * answer) it is cut to the budget and ends with the contract's truncation marker; an oversized failure has its
 * reason cut the same way. The result leaves this stage frozen (seed 003 INV-TOOL-002).
 */
export const observationStage: ToolStage = async (call, next) => {
  const result = await withBinaryResourcesStored(call, await next());
  const { max_bytes_per_call: maxBytes, truncation_marker: marker } = call.policy.tool_output_budget;
  if (!result.executed || !exceeds(result.content, maxBytes)) {
    return Object.isFrozen(result) ? result : freezeToolResult(result);
  }
  if (result.status === "ok" && call.outputStore !== null && !readsStoredOutputs(call)) {
    const stored = await storeOutput(call, result);
    if (stored !== null) return stored;
  }
  return freezeToolResult({ ...result, content: cutToBudget(result, maxBytes, marker) });
};

/** Binary resources go behind handles; the lines naming them join the output's text. */
async function withBinaryResourcesStored(
  call: ToolCallContext,
  result: ToolExecutionResult,
): Promise<ToolExecutionResult> {
  const resources = result.binary_resources;
  if (resources === undefined || resources.length === 0) return result;
  const lines = await storeBinaryResources(resources, call.outputStore, {
    toolName: call.invocation.name,
    callId: call.callId,
  });
  const { binary_resources: _stored, ...rest } = result;
  return { ...rest, content: [result.content, ...lines].filter((line) => line !== "").join("\n") };
}

const failurePrefix = "(tool failed: ";

/**
 * An oversized output cut to the budget. A failure keeps its `(tool failed: …)` shape, which is how the model
 * recognises a failed call (seed 000 §8): only its reason is cut.
 */
function cutToBudget(result: ToolExecutionResult, maxBytes: number, marker: string): string {
  const { content } = result;
  if (result.status === "ok" || !content.startsWith(failurePrefix) || !content.endsWith(")")) {
    return truncateToBytes(content, maxBytes, marker);
  }
  const reason = content.slice(failurePrefix.length, -1);
  const room = Math.max(0, maxBytes - failurePrefix.length - 1);
  return `${failurePrefix}${truncateToBytes(reason, room, marker)})`;
}

async function storeOutput(
  call: ToolCallContext,
  result: ToolExecutionResult,
): Promise<ToolExecutionResult | null> {
  try {
    const stored = await call.outputStore!.store(result.content, {
      toolName: call.invocation.name,
      callId: call.callId,
    });
    return freezeToolResult({
      ...result,
      content: toolOutputHandleMessage(stored, call.policy.tool_output_budget.max_bytes_per_call),
      handle: stored.handle,
    });
  } catch {
    // A full or unwritable disk must not cost the model the whole output: the caller truncates instead.
    return null;
  }
}
