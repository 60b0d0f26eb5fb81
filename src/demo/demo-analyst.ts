import type { RecordedRequest } from "../testing/scripted-openai-server.js";
import type { ScriptedStep } from "../testing/scripted-openai-step.js";

interface WireMessage {
  readonly role: string;
  readonly content?: string | null;
  readonly tool_call_id?: string;
  readonly tool_calls?: readonly { readonly id: string; readonly function: { readonly name: string } }[];
}

/**
 * The demo's scripted model: a deterministic "analyst" that reads the conversation it is sent, like a real
 * model would, and acts on the tool results it finds there: search, then look up every product found, then
 * report. Everything it says comes from the real MCP server's answers.
 */
export function demoAnalyst(request: RecordedRequest): ScriptedStep {
  const body = request.body as { messages?: readonly WireMessage[] } | null;
  const messages = body?.messages ?? [];
  const toolNames = new Map<string, string>();
  for (const message of messages) {
    for (const call of message.tool_calls ?? []) toolNames.set(call.id, call.function.name);
  }
  const results = messages
    .filter((message) => message.role === "tool")
    .map((message) => ({
      tool: toolNames.get(message.tool_call_id ?? "") ?? "",
      content: message.content ?? "",
    }));

  const searches = results.filter((result) => result.tool.endsWith("search_products"));
  if (searches.length === 0) {
    const prompt = messages.find((message) => message.role === "user")?.content ?? "";
    const query = /monitor/i.test(prompt) ? "monitor" : /mouse|mice/i.test(prompt) ? "mouse" : "keyboard";
    return { kind: "tool_calls", calls: [{ name: "catalog__search_products", arguments: { query } }] };
  }
  const found = parseList(searches[searches.length - 1]?.content ?? "[]");
  const lookups = results.filter((result) => result.tool.endsWith("get_stock_and_price"));
  if (lookups.length === 0 && found.length > 0) {
    return {
      kind: "tool_calls",
      calls: found.map((product) => ({
        name: "catalog__get_stock_and_price",
        arguments: { product_id: product.id },
      })),
    };
  }
  const rows = lookups.map((lookup) => {
    const facts = parseObject(lookup.content);
    const name = found.find((product) => product.id === facts.id)?.name ?? String(facts.id);
    const stock = Number(facts.stock);
    return `| ${name} | ${Number(facts.price).toFixed(2)} EUR | ${stock > 0 ? `${stock} in stock` : "out of stock"} |`;
  });
  const content =
    found.length === 0
      ? "No matching products are in the catalogue."
      : ["| Product | Price | Availability |", "|---|---|---|", ...rows].join("\n");
  return {
    kind: "tool_calls",
    calls: [{ name: "final_report", arguments: { format: "markdown", content } }],
  };
}

function parseList(text: string): { id: string; name: string }[] {
  try {
    const value = JSON.parse(text);
    return Array.isArray(value) ? value : [];
  } catch {
    return [];
  }
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text);
    return value !== null && typeof value === "object" ? value : {};
  } catch {
    return {};
  }
}
