import { setTimeout as delay } from "node:timers/promises";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

/** A tool execution the server performed: what actually ran, as opposed to what was sent. */
export interface ExecutedMcpToolCall {
  readonly tool: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

function text(value: string): CallToolResult {
  return { content: [{ type: "text", text: value }] };
}

/**
 * The MCP server behind one session of the HTTP test server (the SDK needs one instance per session). Every
 * instance logs the tools it executes into the same list.
 */
export function createMcpHttpTestSessionServer(executed: ExecutedMcpToolCall[]): McpServer {
  const server = new McpServer({ name: "charter-http-test", version: "1.0.0" });
  const log = (tool: string, args: Record<string, unknown>) => executed.push({ tool, arguments: args });

  server.registerTool(
    "echo",
    {
      description: "Returns its text unchanged.",
      inputSchema: { text: z.string() },
      annotations: { readOnlyHint: true },
    },
    async (args) => {
      log("echo", args);
      return text(args.text);
    },
  );
  server.registerTool(
    "add",
    { description: "Adds two numbers.", inputSchema: { a: z.number(), b: z.number() } },
    async (args) => {
      log("add", args);
      return text(String(args.a + args.b));
    },
  );
  server.registerTool(
    "record",
    {
      description: "Records its value: a tool with a side effect.",
      inputSchema: { value: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    },
    async (args) => {
      log("record", args);
      return text(`recorded ${args.value}`);
    },
  );
  server.registerTool(
    "purge",
    {
      description: "Deletes everything (pretends to).",
      inputSchema: { scope: z.string() },
      annotations: {
        title: "Purge",
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    async (args) => {
      log("purge", args);
      return text(`purged ${args.scope}`);
    },
  );
  server.registerTool(
    "slow",
    {
      description: "Waits the given milliseconds, then answers 'done'.",
      inputSchema: { ms: z.number().int().min(0) },
      annotations: { readOnlyHint: true },
    },
    async (args, extra) => {
      log("slow", args);
      try {
        await delay(args.ms, undefined, { signal: extra.signal });
      } catch {
        return text("cancelled");
      }
      return text("done");
    },
  );
  // Never reached: the HTTP handler drops the connection when these are called, after logging the call.
  server.registerTool(
    "vanish",
    { description: "Runs, then the server drops the connection without answering.", inputSchema: {} },
    async () => text("unreachable"),
  );
  server.registerTool(
    "vanish_read_only",
    {
      description: "Like vanish, for a read-only tool.",
      inputSchema: {},
      annotations: { readOnlyHint: true },
    },
    async () => text("unreachable"),
  );
  server.registerTool(
    "request_meta",
    {
      description: "Returns the `_meta` of the tools/call request that called it, as JSON ({} without one).",
      inputSchema: {},
      annotations: { readOnlyHint: true },
    },
    async (args, extra) => {
      log("request_meta", args);
      return text(JSON.stringify(extra._meta ?? {}));
    },
  );
  server.registerTool(
    "fail",
    { description: "Reports a tool error with the given message.", inputSchema: { message: z.string() } },
    async (args) => {
      log("fail", args);
      return { content: [{ type: "text", text: args.message }], isError: true };
    },
  );
  server.registerTool(
    "list_roots",
    { description: "Asks the client for its roots and returns them as JSON.", inputSchema: {} },
    async (args, extra) => {
      log("list_roots", args);
      const result = await server.server.listRoots(undefined, { relatedRequestId: extra.requestId });
      return text(JSON.stringify(result.roots));
    },
  );
  server.registerTool(
    "sample",
    {
      description: "Asks the client's model (sampling) once with the text and returns its answer.",
      inputSchema: { text: z.string() },
    },
    async (args, extra) => {
      log("sample", args);
      const result = await server.server.createMessage(
        { messages: [{ role: "user", content: { type: "text", text: args.text } }], maxTokens: 100 },
        { relatedRequestId: extra.requestId },
      );
      const content = result.content as { type: string; text?: string };
      return text(content.type === "text" ? (content.text ?? "") : `[${content.type}]`);
    },
  );
  installMalformedResultTool(server, log);
  return server;
}

/** Results whose envelope is broken, by the `kind` `malformed_result` is called with. */
const malformedResults: Readonly<Record<string, unknown>> = {
  content_not_array: { content: "not a list" },
  unknown_content_type: {
    content: [
      { type: "text", text: "fine" },
      { type: "video", url: "https://example.com/clip.mp4" },
    ],
  },
  missing_field: { content: [{ type: "image", mimeType: "image/png" }] },
  is_error_not_boolean: { content: [], isError: "yes" },
};

type RequestHandler = (request: { method: string; params?: unknown }, extra: unknown) => Promise<unknown>;

/**
 * `malformed_result`: answers with a tools/call result whose envelope is broken in the way `kind` names. McpServer
 * checks what a tool handler returns and would refuse to send it, so the tools/call handler answers it itself.
 */
function installMalformedResultTool(
  server: McpServer,
  log: (tool: string, args: Record<string, unknown>) => void,
): void {
  server.registerTool(
    "malformed_result",
    {
      description: "Answers with a tools/call result whose envelope is broken in the way `kind` names.",
      inputSchema: { kind: z.enum(Object.keys(malformedResults) as [string, ...string[]]) },
      annotations: { readOnlyHint: true },
    },
    async () => text("unreachable: the tools/call handler answers this tool"),
  );
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, RequestHandler> })
    ._requestHandlers;
  const original = handlers.get("tools/call");
  if (original === undefined) throw new Error("McpServer registered no tools/call handler");
  handlers.set("tools/call", async (request, extra) => {
    const params = request.params as { name?: unknown; arguments?: { kind?: unknown } } | undefined;
    if (params?.name !== "malformed_result") return original(request, extra);
    log("malformed_result", { kind: params.arguments?.kind });
    return malformedResults[String(params.arguments?.kind)] ?? text("unknown kind");
  });
}
