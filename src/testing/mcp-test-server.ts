/**
 * A real MCP server over stdio, built on the official SDK, for tests and the demo. Node runs this file
 * directly (`node src/testing/mcp-test-server.ts`) by stripping its types, so it has no relative imports
 * and uses only erasable TypeScript syntax.
 *
 * Environment switches:
 * - `CHARTER_TEST_MCP_FAIL_START=1`: exit with code 1 before connecting (preflight failures).
 * - `CHARTER_TEST_MCP_FAIL_LIST=1`: connect, then answer `tools/list` with an error.
 * - `CHARTER_TEST_MCP_SILENT=1`: never answer anything (start timeouts); exits when stdin closes.
 * - `CHARTER_TEST_MCP_PAGE_SIZE=<n>`: list tools in pages of n, following `nextCursor`.
 * Besides plain tools it has tools that return an image, audio and a binary resource, tools that ask the client
 * for its roots and for sampling, `long_job`, a task-only tool (`execution.taskSupport: "required"`) that a
 * client without tasks cannot call, `request_meta`, which answers the `_meta` it was called with, and
 * `malformed_result`, which answers with a broken result envelope.
 *
 * - `CHARTER_TEST_RECORD_FILE=<path>`: where the `record` tools append their JSON lines (`count_records` reads
 *   it); `record_until_released` answers once `<path>.release` exists.
 */
import { appendFileSync, existsSync, readFileSync, watch, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

function text(value: string): CallToolResult {
  return { content: [{ type: "text", text: value }] };
}

function bigOutput(lines: number, width: number): string {
  const rows: string[] = [];
  for (let index = 1; index <= lines; index++) {
    const label = `line ${String(index).padStart(6, "0")} `;
    rows.push(label + "x".repeat(Math.max(0, width - label.length)));
  }
  return rows.join("\n");
}

if (process.env.CHARTER_TEST_MCP_FAIL_START === "1") {
  process.stderr.write("mcp-test-server: failing on purpose before connecting\n");
  process.exit(1);
}

if (process.env.CHARTER_TEST_MCP_STUBBORN === "1") {
  // A server that will not leave: only SIGKILL ends it.
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => {});
  setInterval(() => {}, 1 << 30);
}

if (process.env.CHARTER_TEST_MCP_SILENT === "1") {
  // Reads stdin so the client's messages go nowhere, and leaves when the client closes it.
  process.stdin.resume();
  process.stdin.on("end", () => process.exit(0));
} else {
  await serve();
}

async function serve(): Promise<void> {
  const server = new McpServer({ name: "charter-test", version: "1.0.0" });

  server.registerTool(
    "echo",
    {
      description: "Returns its text unchanged.",
      inputSchema: { text: z.string() },
      annotations: { readOnlyHint: true },
    },
    async ({ text: value }) => text(value),
  );

  server.registerTool(
    "add",
    {
      description: "Adds two numbers.",
      inputSchema: { a: z.number(), b: z.number() },
      annotations: { readOnlyHint: true },
    },
    async ({ a, b }) => text(String(a + b)),
  );

  server.registerTool(
    "big_output",
    {
      description: "Returns the given number of numbered lines, each `width` characters wide.",
      inputSchema: { lines: z.number().int().min(0), width: z.number().int().min(1).optional() },
      annotations: { readOnlyHint: true },
    },
    async ({ lines, width }) => text(bigOutput(lines, width ?? 80)),
  );

  server.registerTool(
    "slow",
    {
      description: "Waits the given milliseconds, then answers 'done'.",
      inputSchema: { ms: z.number().int().min(0) },
      annotations: { readOnlyHint: true },
    },
    async ({ ms }, extra) => {
      try {
        await delay(ms, undefined, { signal: extra.signal });
      } catch {
        return text("cancelled");
      }
      return text("done");
    },
  );

  server.registerTool(
    "fail",
    {
      description: "Reports a tool error with the given message.",
      inputSchema: { message: z.string() },
    },
    async ({ message }) => ({ content: [{ type: "text", text: message }], isError: true }),
  );

  server.registerTool(
    "record",
    {
      description: "Appends {key, value} to the record file: a tool with a side effect.",
      inputSchema: { key: z.string(), value: z.string() },
      annotations: { destructiveHint: false, idempotentHint: false },
    },
    async ({ key, value }) => {
      const file = process.env.CHARTER_TEST_RECORD_FILE;
      if (file === undefined || file === "") {
        return { content: [{ type: "text", text: "CHARTER_TEST_RECORD_FILE is not set" }], isError: true };
      }
      appendFileSync(file, `${JSON.stringify({ tool: "record", key, value, pid: process.pid })}\n`);
      return text("recorded");
    },
  );

  server.registerTool(
    "count_records",
    {
      description:
        "Answers how many lines the record file holds: read-only, but its answer changes with the file.",
      annotations: { readOnlyHint: true },
    },
    async () => {
      const file = process.env.CHARTER_TEST_RECORD_FILE;
      if (file === undefined || file === "") {
        return { content: [{ type: "text", text: "CHARTER_TEST_RECORD_FILE is not set" }], isError: true };
      }
      const lines = readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line !== "");
      return text(`${lines.length} records`);
    },
  );

  server.registerTool(
    "record_slowly",
    {
      description:
        "Appends {key} to the record file, then waits `ms` before answering: a side effect in flight.",
      inputSchema: { key: z.string(), ms: z.number().int().nonnegative() },
      annotations: { destructiveHint: false, idempotentHint: false },
    },
    async ({ key, ms }) => {
      const file = process.env.CHARTER_TEST_RECORD_FILE;
      if (file === undefined || file === "") {
        return { content: [{ type: "text", text: "CHARTER_TEST_RECORD_FILE is not set" }], isError: true };
      }
      appendFileSync(file, `${JSON.stringify({ tool: "record_slowly", key, pid: process.pid })}\n`);
      await delay(ms);
      return text("recorded slowly");
    },
  );

  server.registerTool(
    "record_until_released",
    {
      // No annotations at all: what an unannotated MCP tool with a side effect looks like to Charter.
      description:
        "Appends {key} to the record file, then answers once the file <record file>.release exists: a side " +
        "effect done, its answer held back for as long as a test needs.",
      inputSchema: { key: z.string() },
    },
    async ({ key }) => {
      const file = process.env.CHARTER_TEST_RECORD_FILE;
      if (file === undefined || file === "") {
        return { content: [{ type: "text", text: "CHARTER_TEST_RECORD_FILE is not set" }], isError: true };
      }
      appendFileSync(file, `${JSON.stringify({ tool: "record_until_released", key, pid: process.pid })}\n`);
      await untilExists(`${file}.release`);
      return text(`recorded ${key}`);
    },
  );

  server.registerTool(
    "request_meta",
    {
      description: "Returns the `_meta` of the tools/call request that called it, as JSON ({} without one).",
      annotations: { readOnlyHint: true },
    },
    async (extra) => text(JSON.stringify(extra._meta ?? {})),
  );

  server.registerTool(
    "crash",
    { description: "Exits the server process at once, without answering." },
    async () => process.exit(1),
  );

  registerMediaTools(server);
  registerClientFeatureTools(server);
  installTaskOnlyTool(server);
  installMalformedResultTool(server);

  const pageSize = Number(process.env.CHARTER_TEST_MCP_PAGE_SIZE ?? "0");
  if (process.env.CHARTER_TEST_MCP_FAIL_LIST === "1") {
    server.server.setRequestHandler(ListToolsRequestSchema, () => {
      throw new McpError(ErrorCode.InternalError, "tools/list failing on purpose");
    });
  } else if (Number.isInteger(pageSize) && pageSize > 0) {
    installPaginatedListing(server, pageSize);
  }

  if (process.env.CHARTER_TEST_MCP_STUBBORN !== "1") process.stdin.on("end", () => process.exit(0));
  await server.connect(new StdioServerTransport());
  const pidFile = process.env.CHARTER_TEST_MCP_PID_FILE;
  if (pidFile !== undefined) writeFileSync(pidFile, String(process.pid));
}

/** Resolves once `path` exists: watched, not polled, and checked again after the watch starts (no lost event). */
function untilExists(path: string): Promise<void> {
  return new Promise((resolveExists) => {
    const watcher = watch(dirname(path), () => check());
    function check(): void {
      if (!existsSync(path)) return;
      watcher.close();
      resolveExists();
    }
    check();
  });
}

/**
 * McpServer lists every tool in one page. To exercise clients that follow `nextCursor`, this replaces its
 * `tools/list` handler with one that asks the original for the full list and hands it out page by page.
 */
function installPaginatedListing(server: McpServer, pageSize: number): void {
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, ListHandler> })
    ._requestHandlers;
  const original = handlers.get("tools/list");
  if (original === undefined) throw new Error("McpServer registered no tools/list handler");
  handlers.set("tools/list", async (request, extra) => {
    const full = (await original({ method: "tools/list", params: {} }, extra)) as { tools: unknown[] };
    const cursor = (request.params as { cursor?: string } | undefined)?.cursor;
    const start = cursor === undefined ? 0 : Number(cursor);
    const tools = full.tools.slice(start, start + pageSize);
    const next = start + pageSize;
    return next < full.tools.length ? { tools, nextCursor: String(next) } : { tools };
  });
}

type ListHandler = (request: { method: string; params?: unknown }, extra: unknown) => Promise<unknown>;

/** A 1x1 transparent PNG. */
const testImagePng =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
/** A WAV header with no samples. */
const testAudioWav = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

function registerMediaTools(server: McpServer): void {
  server.registerTool(
    "snapshot",
    {
      description: "Returns a caption and a PNG image.",
      inputSchema: { caption: z.string() },
      annotations: { readOnlyHint: true },
    },
    async ({ caption }) => ({
      content: [
        { type: "text", text: caption },
        { type: "image", data: testImagePng, mimeType: "image/png" },
      ],
    }),
  );
  server.registerTool(
    "recording",
    {
      description: "Returns a WAV recording.",
      annotations: { readOnlyHint: true },
    },
    async () => ({ content: [{ type: "audio", data: testAudioWav, mimeType: "audio/wav" }] }),
  );
  server.registerTool(
    "blob_resource",
    {
      description: "Returns an embedded binary resource of the given bytes (base64) and media type.",
      inputSchema: { base64: z.string(), mimeType: z.string() },
      annotations: { readOnlyHint: true },
    },
    async ({ base64, mimeType }) => ({
      content: [{ type: "resource", resource: { uri: "test://blob/1", mimeType, blob: base64 } }],
    }),
  );
}

function registerClientFeatureTools(server: McpServer): void {
  server.registerTool(
    "list_roots",
    {
      description: "Asks the client for its roots and returns them as JSON.",
      annotations: { readOnlyHint: true },
    },
    async (extra) => {
      const result = await server.server.listRoots(undefined, { relatedRequestId: extra.requestId });
      return text(JSON.stringify(result.roots));
    },
  );
  server.registerTool(
    "deploy",
    {
      description:
        "Asks the user (elicitation) which environment to deploy to, then records the deployment: a tool that needs a human answer.",
      inputSchema: { service: z.string() },
    },
    async ({ service }, extra) => {
      const answer = await server.server.elicitInput(
        {
          message: `Which environment should ${service} go to?`,
          requestedSchema: {
            type: "object",
            properties: { environment: { type: "string", enum: ["staging", "production"] } },
            required: ["environment"],
          },
        },
        { relatedRequestId: extra.requestId },
      );
      if (answer.action !== "accept") return text(`not deployed: the user chose ${answer.action}`);
      const environment = String(answer.content?.environment);
      const file = process.env.CHARTER_TEST_RECORD_FILE;
      if (file !== undefined && file !== "") {
        appendFileSync(
          file,
          `${JSON.stringify({ tool: "deploy", key: service, value: environment, pid: process.pid })}\n`,
        );
      }
      return text(`deployed ${service} to ${environment}`);
    },
  );
  server.registerTool(
    "sample",
    {
      description:
        "Asks the client's model (sampling) `times` times, each time with the text; returns the answers, or the error that stopped it.",
      inputSchema: { text: z.string(), times: z.number().int().min(1).optional() },
    },
    async ({ text: question, times }, extra) => {
      const answers: string[] = [];
      for (let index = 0; index < (times ?? 1); index++) {
        try {
          const result = await server.server.createMessage(
            {
              systemPrompt: "You answer for the charter-test server.",
              messages: [{ role: "user", content: { type: "text", text: question } }],
              maxTokens: 200,
            },
            { relatedRequestId: extra.requestId },
          );
          const content = result.content as { type: string; text?: string };
          answers.push(content.type === "text" ? (content.text ?? "") : `[${content.type}]`);
        } catch (error) {
          return text(
            JSON.stringify({ answers, error: error instanceof Error ? error.message : String(error) }),
          );
        }
      }
      return text(JSON.stringify({ answers }));
    },
  );
}

/**
 * Lists `long_job`, a tool that may only run as a task. McpServer registers task tools only with a task store;
 * a tool that is listed and never called needs none, so the listing is extended instead.
 */
function installTaskOnlyTool(server: McpServer): void {
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, ListHandler> })
    ._requestHandlers;
  const original = handlers.get("tools/list");
  if (original === undefined) throw new Error("McpServer registered no tools/list handler");
  handlers.set("tools/list", async (request, extra) => {
    const full = (await original(request, extra)) as { tools: unknown[] };
    return {
      ...full,
      tools: [
        ...full.tools,
        {
          name: "long_job",
          description: "Runs for a long time; must be called as a task.",
          inputSchema: { type: "object", properties: {} },
          execution: { taskSupport: "required" },
        },
      ],
    };
  });
}

/**
 * Lists `malformed_result`, a tool whose answer is not a valid tools/call result. McpServer checks what a tool
 * handler returns and would refuse to send it, so the tools/call handler answers this tool itself.
 */
function installMalformedResultTool(server: McpServer): void {
  // Results whose envelope is broken, by kind (inside the function: the server starts before this module's
  // later constants are initialised).
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
  server.registerTool(
    "malformed_result",
    {
      description: "Answers with a tools/call result whose envelope is broken in the way `kind` names.",
      inputSchema: { kind: z.enum(Object.keys(malformedResults) as [string, ...string[]]) },
      annotations: { readOnlyHint: true },
    },
    async () => text("unreachable: the tools/call handler answers this tool"),
  );
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, ListHandler> })
    ._requestHandlers;
  const original = handlers.get("tools/call");
  if (original === undefined) throw new Error("McpServer registered no tools/call handler");
  handlers.set("tools/call", async (request, extra) => {
    const params = request.params as { name?: unknown; arguments?: { kind?: unknown } } | undefined;
    if (params?.name !== "malformed_result") return original(request, extra);
    return malformedResults[String(params.arguments?.kind)] ?? text("unknown kind");
  });
}
