import { failedToolResult } from "../failed-tool-result.js";
import type { ToolStage } from "../tool-pipeline.js";

const maxNameInMessage = 120;

/**
 * Finds the called tool in the registry. An unknown tool is a failed result naming the tools that do exist,
 * never an exception (seed 003 INV-TOOL-003).
 */
export const lookupStage: ToolStage = (call, next) => {
  const name = call.invocation.name;
  const tool = call.registry.get(name);
  if (tool === undefined) {
    const shown = name.length > maxNameInMessage ? `${name.slice(0, maxNameInMessage)}…` : name;
    const available = call.registry.names();
    const list = available.length === 0 ? "(none)" : available.join(", ");
    return Promise.resolve(
      failedToolResult(call, "TOOL_NOT_FOUND", `unknown tool '${shown}'; available: ${list}`),
    );
  }
  call.tool = tool;
  return next();
};
