import { defineFunctionTool } from "../tools/define-function-tool.js";
import type { RegisteredTool } from "../tools/tool-definition.js";

/** How many lines `export_inventory` returns: far more than the corpus's output limit lets through. */
export const inventoryLines = 400;

/** What the corpus's built-in tools did, so that a case can check what ran against what the transcript says. */
export interface ConformanceToolLog {
  readonly executions: string[];
}

/** The line `export_inventory` writes for item `index` (1-based), so a check can look for it. */
export function inventoryLine(index: number): string {
  const id = String(index).padStart(4, "0");
  return `item-${id}\tstock ${(index * 37) % 101}\twarehouse ${["north", "south", "east"][index % 3]}`;
}

/**
 * The corpus's test tools: TypeScript function tools defined in Charter itself, so that the corpus needs no MCP
 * server. Each records its executions in `log`. `wait_for_approval` never answers on its own: only the contract's
 * tool timeout (its abort signal) ends it.
 */
export function createConformanceTools(log: ConformanceToolLog): {
  readonly lookupOrder: RegisteredTool;
  readonly recordNote: RegisteredTool;
  readonly deleteRecords: RegisteredTool;
  readonly exportInventory: RegisteredTool;
  readonly waitForApproval: RegisteredTool;
} {
  return {
    lookupOrder: defineFunctionTool<{ order_id: string }>({
      name: "lookup_order",
      description: "Looks up an order by its id and returns its status as JSON.",
      inputSchema: {
        type: "object",
        properties: { order_id: { type: "string", description: "The order id, for example 42." } },
        required: ["order_id"],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true },
      async execute({ order_id }) {
        log.executions.push("lookup_order");
        return JSON.stringify({ order_id, status: "shipped", carrier: "Northwind Freight", items: 3 });
      },
    }),
    recordNote: defineFunctionTool<{ note: string }>({
      name: "record_note",
      description: "Stores a note exactly as given.",
      inputSchema: {
        type: "object",
        properties: { note: { type: "string" } },
        required: ["note"],
        additionalProperties: false,
      },
      annotations: { idempotentHint: true },
      async execute({ note }) {
        log.executions.push("record_note");
        return JSON.stringify({ stored: true, characters: note.length });
      },
    }),
    deleteRecords: defineFunctionTool<{ table: string }>({
      name: "delete_records",
      description: "Deletes every record of a table.",
      inputSchema: {
        type: "object",
        properties: { table: { type: "string" } },
        required: ["table"],
        additionalProperties: false,
      },
      annotations: { destructiveHint: true },
      async execute({ table }) {
        log.executions.push("delete_records");
        return `deleted every record of ${table}`;
      },
    }),
    exportInventory: defineFunctionTool({
      name: "export_inventory",
      description: "Exports the whole inventory, one item per line (item id, stock, warehouse).",
      inputSchema: { type: "object", properties: {}, additionalProperties: false },
      annotations: { readOnlyHint: true },
      async execute() {
        log.executions.push("export_inventory");
        return Array.from({ length: inventoryLines }, (_, index) => inventoryLine(index + 1)).join("\n");
      },
    }),
    waitForApproval: defineFunctionTool<{ request: string }>({
      name: "wait_for_approval",
      description: "Asks a person to approve a request and waits for the answer.",
      inputSchema: {
        type: "object",
        properties: { request: { type: "string" } },
        required: ["request"],
        additionalProperties: false,
      },
      async execute(_input, context) {
        log.executions.push("wait_for_approval");
        // Nobody ever answers: the call ends only when the pipeline's tool timeout aborts it.
        await new Promise<void>((resolve) => {
          if (context.signal.aborted) resolve();
          else context.signal.addEventListener("abort", () => resolve(), { once: true });
        });
        return "approved";
      },
    }),
  };
}
