import { freezeToolResult } from "../tool-execution-result.js";
import type { ToolStage } from "../tool-pipeline.js";

function jsonLength(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0;
  }
}

/**
 * Measures every call, refused or executed, for its accounting entry (seed 000 §7): latency from the
 * environment's monotonic clock, `characters_in` as the JSON length of the arguments, `characters_out` as the
 * length of what the model is shown. Runs outermost, so its measures cover the whole pipeline.
 */
export const auditStage: ToolStage = async (call, next) => {
  const started = call.environment.monotonicNow();
  const result = await next();
  return freezeToolResult({
    ...result,
    latency_ms: Math.max(0, call.environment.monotonicNow() - started),
    characters_in: jsonLength(call.invocation.arguments),
    characters_out: result.content.length,
  });
};
