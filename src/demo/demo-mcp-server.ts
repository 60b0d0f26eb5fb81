/**
 * The demo's tool server: a tiny product catalogue over MCP stdio (official SDK). Node runs it as
 * TypeScript source or as compiled JavaScript, so it has no relative imports and only erasable syntax.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const products = [
  { id: "kb-101", name: "Mechanical keyboard", category: "keyboards", price: 89.0, stock: 14 },
  { id: "kb-205", name: "Low-profile keyboard", category: "keyboards", price: 64.5, stock: 0 },
  { id: "ms-310", name: "Wireless mouse", category: "mice", price: 29.9, stock: 51 },
  { id: "mn-270", name: "27-inch monitor", category: "monitors", price: 239.0, stock: 6 },
];

const server = new McpServer({ name: "charter-demo-catalog", version: "1.0.0" });

server.registerTool(
  "search_products",
  {
    description: "Searches the catalogue by a word of the product name or category; returns ids and names.",
    inputSchema: { query: z.string().min(1) },
    annotations: { readOnlyHint: true },
  },
  async ({ query }) => {
    const needle = query.toLowerCase();
    const found = products
      .filter((product) => product.name.toLowerCase().includes(needle) || product.category.includes(needle))
      .map(({ id, name }) => ({ id, name }));
    return { content: [{ type: "text", text: JSON.stringify(found) }] };
  },
);

server.registerTool(
  "get_stock_and_price",
  {
    description: "Returns the price in EUR and the units in stock of one product id.",
    inputSchema: { product_id: z.string() },
    annotations: { readOnlyHint: true },
  },
  async ({ product_id }) => {
    const product = products.find((candidate) => candidate.id === product_id);
    if (product === undefined)
      return { content: [{ type: "text", text: `no product ${product_id}` }], isError: true };
    return {
      content: [
        {
          type: "text",
          text: JSON.stringify({ id: product.id, price: product.price, stock: product.stock }),
        },
      ],
    };
  },
);

await server.connect(new StdioServerTransport());
