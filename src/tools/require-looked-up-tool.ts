import { CharterError } from "../foundation/charter-error.js";
import type { RegisteredTool } from "./tool-definition.js";
import type { ToolCallContext } from "./tool-pipeline.js";

/**
 * The registry entry of a call, for stages that run after `lookupStage`. A pipeline assembled in the wrong
 * order is a programming error: it throws, and the composed pipeline turns that into a failed result.
 */
export function requireLookedUpTool(call: ToolCallContext, stageName: string): RegisteredTool {
  if (call.tool === null) {
    throw new CharterError("INTERNAL_ERROR", `${stageName} ran before lookupStage had found the tool`, {
      details: { stage: stageName, tool: call.invocation.name },
    });
  }
  return call.tool;
}
