// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are REST tool placeholders, not templates.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { mcpServerSchema, mcpServerShape } from "../../src/config/mcp-server-configuration-schema.js";
import {
  queueReferenceIssues,
  queueSchema,
  queueShape,
} from "../../src/config/queue-configuration-schema.js";
import {
  restToolNameSchema,
  restToolSchema,
  restToolShape,
} from "../../src/config/rest-tool-configuration-schema.js";
import { schemaIssues } from "../../src/config/schema-issues.js";
import type { McpServerDefinition } from "../../src/tools/sources/mcp-server-definition.js";
import type { RestToolDefinition } from "../../src/tools/sources/rest-tool-definition.js";
import type { ToolQueueDefinitions } from "../../src/tools/tool-queues.js";

function issueKeys(schema: z.ZodType, value: unknown): string[] {
  const parsed = schema.safeParse(value);
  return parsed.success ? [] : schemaIssues(parsed.error).map((issue) => issue.key);
}

describe("mcpServers.<name>", () => {
  it("normalises a stdio server as before, adding only the keys that are set", () => {
    const stdio: McpServerDefinition = mcpServerSchema.parse({
      command: "files-server",
      args: ["--root", "/"],
    });
    expect(stdio).toEqual({
      type: "stdio",
      command: "files-server",
      args: ["--root", "/"],
      env: {},
      cwd: null,
    });
    expect(
      mcpServerSchema.parse({ command: "x", toolsDenied: ["delete_*"], requestTimeout: "45s", queue: "fs" }),
    ).toEqual({
      type: "stdio",
      command: "x",
      args: [],
      env: {},
      cwd: null,
      toolsDenied: ["delete_*"],
      requestTimeout: 45_000,
      queue: "fs",
    });
  });

  it("reads a remote server, inferring http from a url, with headers, filters, timeouts and reconnection", () => {
    const remote: McpServerDefinition = mcpServerSchema.parse({
      url: "https://mcp.example.com/mcp",
      headers: { Authorization: "Bearer t" },
      toolsAllowed: ["search_*", "fetch"],
      requestTimeout: 20_000,
      reconnect: { attempts: 5, initialDelay: "250ms", maxDelay: "30s" },
    });
    expect(remote).toEqual({
      type: "http",
      url: "https://mcp.example.com/mcp",
      headers: { Authorization: "Bearer t" },
      toolsAllowed: ["search_*", "fetch"],
      requestTimeout: 20_000,
      reconnect: { attempts: 5, initialDelay: 250, maxDelay: 30_000 },
    });
    expect(mcpServerSchema.parse({ type: "sse", url: "http://127.0.0.1:9000/sse" })).toEqual({
      type: "sse",
      url: "http://127.0.0.1:9000/sse",
      headers: {},
    });
  });

  it("names the key of each mistake", () => {
    expect(issueKeys(mcpServerSchema, { type: "http" })).toEqual(["url"]);
    expect(issueKeys(mcpServerSchema, { type: "stdio" })).toEqual(["command"]);
    expect(issueKeys(mcpServerSchema, { type: "sse", url: "ftp://x/sse" })).toEqual(["url"]);
    expect(issueKeys(mcpServerSchema, { type: "http", url: "http://x/mcp", command: "node" })).toEqual([
      "command",
    ]);
    expect(issueKeys(mcpServerSchema, { command: "x", headers: { a: "b" } })).toEqual(["headers"]);
    expect(issueKeys(mcpServerSchema, { command: "x", reconnect: { attempts: 2 } })).toEqual(["reconnect"]);
    expect(issueKeys(mcpServerSchema, { url: "http://x/mcp", requestTimeout: "soon" })).toEqual([
      "requestTimeout",
    ]);
    expect(issueKeys(mcpServerSchema, { url: "http://x/mcp", reconnect: { attempts: 0 } })).toEqual([
      "reconnect.attempts",
    ]);
    expect(issueKeys(mcpServerSchema, { url: "http://x/mcp", tokens: 1 })).toEqual(["tokens"]);
  });

  it("lets one layer set a single field", () => {
    const layer = z.object(mcpServerShape).partial().strict();
    expect(layer.parse({ headers: { Authorization: "Bearer override" } })).toEqual({
      headers: { Authorization: "Bearer override" },
    });
  });
});

describe("restTools.<name>", () => {
  it("reads a tool, upper-casing the method and keeping ${parameters.x} as written", () => {
    const tool: RestToolDefinition = restToolSchema.parse({
      method: "post",
      url: "https://api.example.com/items/${parameters.id}",
      headers: { "X-Trace": "${parameters.trace}" },
      parametersSchema: { type: "object", properties: { id: { type: "string" }, trace: { type: "string" } } },
      bodyTemplate: { id: "${parameters.id}" },
      timeout: "10s",
      queue: "api",
    });
    expect(tool).toEqual({
      method: "POST",
      url: "https://api.example.com/items/${parameters.id}",
      headers: { "X-Trace": "${parameters.trace}" },
      parametersSchema: { type: "object", properties: { id: { type: "string" }, trace: { type: "string" } } },
      bodyTemplate: { id: "${parameters.id}" },
      timeout: 10_000,
      queue: "api",
    });
  });

  it("names the key of each mistake", () => {
    expect(issueKeys(restToolSchema, { url: "https://x/y" })).toEqual(["method"]);
    expect(issueKeys(restToolSchema, { method: "GET" })).toEqual(["url"]);
    expect(issueKeys(restToolSchema, { method: "FETCH", url: "https://x/y" })).toEqual(["method"]);
    expect(issueKeys(restToolSchema, { method: "GET", url: "/relative" })).toEqual(["url"]);
    expect(issueKeys(restToolSchema, { method: "GET", url: "https://x/y", bodyTemplate: {} })).toEqual([
      "bodyTemplate",
    ]);
    expect(
      issueKeys(restToolSchema, { method: "GET", url: "https://x/y", parametersSchema: { type: "array" } }),
    ).toEqual(["parametersSchema.type"]);
    expect(issueKeys(restToolSchema, { method: "GET", url: "https://x/y", retries: 3 })).toEqual(["retries"]);
    expect(restToolNameSchema.safeParse("get_item").success).toBe(true);
    expect(restToolNameSchema.safeParse("get item").success).toBe(false);
    expect(z.object(restToolShape).partial().strict().parse({ timeout: 500 })).toEqual({ timeout: 500 });
  });
});

describe("queues.<name>", () => {
  it("needs a positive integer bound", () => {
    const queues: ToolQueueDefinitions = { api: queueSchema.parse({ concurrent: 2 }) };
    expect(queues).toEqual({ api: { concurrent: 2 } });
    expect(issueKeys(queueSchema, {})).toEqual(["concurrent"]);
    expect(issueKeys(queueSchema, { concurrent: 0 })).toEqual(["concurrent"]);
    expect(issueKeys(queueSchema, { concurrent: 1.5 })).toEqual(["concurrent"]);
    expect(z.object(queueShape).partial().strict().parse({})).toEqual({});
  });

  it("finds queue references that name no queue", () => {
    expect(
      queueReferenceIssues({
        queues: { api: { concurrent: 1 } },
        mcpServers: { files: { queue: "api" }, web: { queue: "browser" }, plain: {} },
        restTools: { lookup: { queue: "apj" } },
      }),
    ).toEqual([
      { path: ["mcpServers", "web", "queue"], message: 'no queue named "browser" (queues: api)' },
      { path: ["restTools", "lookup", "queue"], message: 'no queue named "apj" (queues: api)' },
    ]);
    expect(queueReferenceIssues({ queues: {}, mcpServers: { a: { queue: null } } })).toEqual([]);
  });
});
