import type { ScriptedStep, ScriptedToolCall } from "../../src/testing/scripted-openai-step.js";
import type { ScriptedWireFormatName } from "../../src/testing/scripted-wire-format.js";

function call(name: string, args: Readonly<Record<string, unknown>> | string): ScriptedToolCall {
  return { name, arguments: args };
}

function calls(...list: ScriptedToolCall[]): ScriptedStep {
  return { kind: "tool_calls", calls: list };
}

const report = (content: string) => call("final_report", { format: "markdown", content });

/** A model that does what each case asks: the valid call, a valid call, narration, a refusal in the report, then calls. */
export const wellBehavedModel: readonly ScriptedStep[] = [
  calls(call("lookup_order", { order_id: "42" })),
  calls(report("Order 42 has shipped.")),
  calls(call("record_note", { note: 'He said "C:\\temp\\new"' })),
  calls(report("Stored.")),
  { kind: "text", text: "I would call lookup_order with the id 42 and read its status." },
  calls(report("I cannot delete records: no tool is available to me.")),
  calls(call("export_inventory", {})),
  calls(report("The inventory lists 400 items.")),
  calls(call("wait_for_approval", { request: "refund order 42" })),
  calls(report("The approval request timed out.")),
];

/**
 * A model that misbehaves in every case: narration twice where a call is required, unparseable arguments (twice:
 * one format retry; three times for Ollama, whose client refuses such a response as an invalid one, so that every
 * attempt of the turn fails), a call where it was told not to, a forbidden call, tools called until the turns run
 * out, nothing but empty answers.
 */
export function misbehavingModel(wire: ScriptedWireFormatName): readonly ScriptedStep[] {
  return [
    { kind: "text", text: "Order 42 is probably fine." },
    { kind: "text", text: "Really, it is fine." },
    calls(call("record_note", '{"note": "He said "C:\\temp"')),
    calls(call("record_note", "{note: unquoted}")),
    ...(wire === "ollama" ? [calls(call("record_note", "{note"))] : []),
    calls(call("lookup_order", { order_id: "42" }), report("Order 42 has shipped.")),
    calls(call("delete_records", { table: "orders" })),
    ...Array.from({ length: 6 }, () => calls(call("export_inventory", {}))),
    { kind: "empty" },
    { kind: "empty" },
    { kind: "empty" },
  ];
}
