import type { AIAgentResult } from "../session/agent-result.js";
import { finalReportText } from "../session/final-report.js";
import type { LoadedWorkItem } from "./load-work-item.js";

/** The agent's task: the description, then what the item names, in a fixed order (the prompt is hashed). */
export function workPrompt(loaded: LoadedWorkItem): string {
  const { item } = loaded;
  const lines = [
    `Work item ${item.id}: ${item.description}`,
    "",
    "The repository is your workspace: read and change it only with the workspace__ tools (paths relative to its top folder).",
  ];
  if (item.input_files !== undefined) lines.push(`Input files: ${item.input_files.join(", ")}`);
  if (item.output_files !== undefined) lines.push(`Expected output files: ${item.output_files.join(", ")}`);
  if (item.test_command !== undefined) lines.push(`The change must pass: ${item.test_command}`);
  lines.push(
    `Limits: at most ${item.constraints.max_files} files touched, ${item.constraints.max_tool_ops} tool calls, ${item.constraints.max_delta_size} lines changed.`,
  );
  return lines.join("\n");
}

/** The `--commit` message: the item's id and the first line of the agent's report. */
export function workCommitMessage(id: string, result: AIAgentResult | null): string {
  const report = result?.finalReport;
  const text = report === null || report === undefined ? "" : finalReportText(report);
  const first =
    text
      .split("\n")
      .find((line) => line.trim() !== "")
      ?.trim() ?? "";
  return first === "" ? id : `${id}: ${first}`;
}
