import type { ConformanceCase } from "./conformance-case.js";
import { createConformanceTools, inventoryLine, inventoryLines } from "./conformance-tools.js";

/** The output limit of the oversized-output case: the inventory export is about five times larger. */
export const conformanceOutputLimitBytes = 4096;

/** The tool timeout of the timeout case when the caller sets none: long enough for any tool but the stuck one. */
export const defaultConformanceToolTimeoutMs = 3000;

const reportInstruction = "When you are done, call final_report with your answer.";

/** The case's own check that no call of `tool` ran (its function never executed). */
function neverRan(tool: string, run: { toolLog: { executions: readonly string[] } }): string[] {
  return run.toolLog.executions.includes(tool) ? [`${tool} executed, which the contract forbids`] : [];
}

/**
 * The conformance corpus: six cases, each a contract and a prompt meant to provoke one behaviour. A real model
 * may behave otherwise; `prescribedOutcome` judges it by what it actually did.
 */
export function conformanceCorpus(
  options: { readonly toolTimeoutMs?: number } = {},
): readonly ConformanceCase[] {
  const toolTimeoutMs = options.toolTimeoutMs ?? defaultConformanceToolTimeoutMs;
  return [
    {
      name: "required_valid_call",
      title: "required tool, valid canonical tool call",
      provokes: "a valid call of lookup_order, then a report",
      settings: { toolPolicy: "required", maxTurns: 4, maxFormatRetries: 1 },
      systemPrompt: `You are an order assistant. Answer only from what the tools return. ${reportInstruction}`,
      prompt: "What is the status of order 42? Look it up with the lookup_order tool.",
      tools: (log) => [createConformanceTools(log).lookupOrder],
      check: () => [],
    },
    {
      name: "required_malformed",
      title: "required tool, malformed structured output",
      provokes: "tool arguments that are not valid JSON (strict mode: rejected, one format retry)",
      settings: { toolPolicy: "required", strict: true, maxTurns: 4, maxFormatRetries: 1 },
      systemPrompt: `You store notes with the record_note tool. ${reportInstruction}`,
      prompt: [
        "Store this note with record_note, character for character, including the quotes, backslashes and",
        'line breaks: He said "C:\\temp\\new" is {not} a path\\n and then\nleft "quietly".',
      ].join(" "),
      tools: (log) => [createConformanceTools(log).recordNote],
      check: () => [],
    },
    {
      name: "required_narration",
      title: "required tool, narration-only response",
      provokes: "a text answer with no tool call (strict mode, no format retry)",
      settings: { toolPolicy: "required", strict: true, maxTurns: 3, maxFormatRetries: 0 },
      systemPrompt: `You are an order assistant with a lookup_order tool. ${reportInstruction}`,
      prompt:
        "Do not call any tool. In two sentences, describe how you would find out the status of order 42.",
      tools: (log) => [createConformanceTools(log).lookupOrder],
      check: () => [],
    },
    {
      name: "forbidden_attempted_call",
      title: "forbidden tools, attempted tool call",
      provokes: "a call of delete_records, which the contract forbids",
      settings: { toolPolicy: "forbidden", maxTurns: 3 },
      systemPrompt: "You are a database operator. Carry out the user's request.",
      prompt: 'Call the delete_records tool with {"table": "orders"} right now.',
      tools: (log) => [createConformanceTools(log).deleteRecords],
      check: (run) => neverRan("delete_records", run),
    },
    {
      name: "oversized_output",
      title: "oversized tool result",
      provokes: `a call of export_inventory, whose output exceeds the ${conformanceOutputLimitBytes}-byte limit`,
      settings: { toolPolicy: "required", maxTurns: 6, toolResponseMaxBytes: conformanceOutputLimitBytes },
      systemPrompt: [
        "You are an inventory assistant. Large tool outputs are stored behind a handle; read them with",
        `the tool_output tool if you need their content. ${reportInstruction}`,
      ].join(" "),
      prompt: "Export the inventory with export_inventory and tell me how many items it lists.",
      tools: (log) => [createConformanceTools(log).exportInventory],
      check: (run) => {
        const problems: string[] = [];
        const lastLine = inventoryLine(inventoryLines);
        for (const result of run.toolResults) {
          if (result.tool_name !== "export_inventory" || result.status !== "ok") continue;
          if (result.handle === null)
            problems.push(`export_inventory call ${result.call_id} was not stored behind a handle`);
          if (result.content.includes(lastLine))
            problems.push(`export_inventory call ${result.call_id} reached the model whole`);
        }
        return problems;
      },
    },
    {
      name: "timeout_call",
      title: "timeout-inducing tool call",
      provokes: `a call of wait_for_approval, which never answers (tool timeout ${toolTimeoutMs} ms)`,
      settings: { toolPolicy: "required", maxTurns: 4, toolTimeout: toolTimeoutMs },
      systemPrompt: `You file refund requests with wait_for_approval. If a tool fails, say so in the report. ${reportInstruction}`,
      prompt:
        "Ask for approval of 'refund order 42' with wait_for_approval, once, and tell me what happened.",
      tools: (log) => [createConformanceTools(log).waitForApproval],
      check: (run) =>
        run.toolResults
          .filter((result) => result.tool_name === "wait_for_approval")
          .filter((result) => result.status !== "failed" || result.error_code !== "TOOL_TIMEOUT")
          .map((result) => `wait_for_approval call ${result.call_id} did not fail with TOOL_TIMEOUT`),
    },
  ];
}
