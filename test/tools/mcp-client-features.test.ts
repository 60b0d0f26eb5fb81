import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { mcpTestServerLaunch } from "../../src/testing/mcp-test-server-launch.js";
import { createDefaultPipeline } from "../../src/tools/create-default-pipeline.js";
import type { McpSamplingHandler, McpSamplingRequest } from "../../src/tools/sources/mcp-client-features.js";
import { createMcpSource, defaultMcpSamplingRequestsPerCall } from "../../src/tools/sources/mcp-source.js";
import { createMcpStdioSource } from "../../src/tools/sources/mcp-stdio-source.js";
import { ToolRegistry } from "../../src/tools/tool-registry.js";
import { useRemoteMcpFixture } from "./remote-mcp-fixture.js";
import { callContext } from "./tool-call-fixture.js";

const launch = mcpTestServerLaunch();
const scratch = mkdtempSync(join(tmpdir(), "charter-mcp-features-"));
const pipeline = createDefaultPipeline();
const fixture = useRemoteMcpFixture();

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A sampling handler that answers from a list and records what it was asked. */
function recordingSampler(answers: (string | null)[]) {
  const requests: McpSamplingRequest[] = [];
  const handler: McpSamplingHandler = async (request) => {
    requests.push(request);
    const text = answers[Math.min(requests.length - 1, answers.length - 1)] ?? null;
    return {
      text,
      model: "scripted/test-model",
      accounting: [{ type: "llm", status: text === null ? "failed" : "ok", request: requests.length }],
    };
  };
  return { requests, handler };
}

function stdioSource(options: { roots?: readonly string[]; sampling?: McpSamplingHandler } = {}) {
  return fixture.track(
    createMcpStdioSource({
      serverName: "test",
      command: launch.command,
      args: launch.args,
      startTimeoutMs: 20_000,
      ...options,
    }),
  );
}

async function call(
  source: ReturnType<typeof stdioSource>,
  name: string,
  args: Record<string, unknown> = {},
) {
  const registry = new ToolRegistry(await source.start());
  return pipeline(callContext(registry, name, args));
}

describe("roots", () => {
  it("offers the working directory when the server configures none (stdio)", async () => {
    const result = await call(stdioSource(), "test__list_roots");
    expect(result.status).toBe("ok");
    expect(JSON.parse(result.content)).toEqual([
      { uri: pathToFileURL(process.cwd()).href, name: process.cwd().split("/").at(-1) },
    ]);
  });

  it("offers the configured roots, relative ones from the run's directory (Streamable HTTP)", async () => {
    const server = await fixture.testServer();
    const source = fixture.track(
      createMcpSource(
        "remote",
        { type: "http", url: server.streamableHttpUrl, roots: ["/srv/data", "reports"] },
        { cwd: scratch },
      ),
    );
    const registry = new ToolRegistry(await source.start());
    const result = await pipeline(callContext(registry, "remote__list_roots"));
    expect(result.status).toBe("ok");
    expect(JSON.parse(result.content)).toEqual([
      { uri: "file:///srv/data", name: "data" },
      { uri: pathToFileURL(join(scratch, "reports")).href, name: "reports" },
    ]);
  });
});

describe("sampling", () => {
  it("is not offered without a handler: the server's request fails and the tool says so", async () => {
    const result = await call(stdioSource(), "test__sample", { text: "hello" });
    expect(result.status).toBe("ok");
    const answer = JSON.parse(result.content);
    expect(answer.answers).toEqual([]);
    // The client declared no sampling capability and has no handler for the method.
    expect(answer.error).toMatch(/Method not found/);
  });

  it("serves the server's request with the handler, and the call carries its accounting", async () => {
    const sampler = recordingSampler(["a short summary"]);
    const result = await call(stdioSource({ sampling: sampler.handler }), "test__sample", {
      text: "Summarize: the sky is blue",
    });
    expect(result.status).toBe("ok");
    expect(JSON.parse(result.content)).toEqual({ answers: ["a short summary"] });
    expect(sampler.requests).toHaveLength(1);
    expect(sampler.requests[0]).toMatchObject({
      server: "test",
      systemPrompt: "You answer for the charter-test server.",
      prompt: "User: Summarize: the sky is blue",
      maxTokens: 200,
    });
    expect(result.accounting).toEqual([{ type: "llm", status: "ok", request: 1 }]);
  });

  it(`refuses more than ${defaultMcpSamplingRequestsPerCall} requests in one call`, async () => {
    const sampler = recordingSampler(["again"]);
    const result = await call(stdioSource({ sampling: sampler.handler }), "test__sample", {
      text: "loop",
      times: defaultMcpSamplingRequestsPerCall + 3,
    });
    const answer = JSON.parse(result.content);
    expect(answer.answers).toHaveLength(defaultMcpSamplingRequestsPerCall);
    expect(answer.error).toMatch(/sampling limit reached/);
    expect(sampler.requests).toHaveLength(defaultMcpSamplingRequestsPerCall);
    expect(result.accounting).toHaveLength(defaultMcpSamplingRequestsPerCall);
  });

  it("sends the server an error when the model gives no answer, keeping the accounting", async () => {
    const sampler = recordingSampler([null]);
    const result = await call(stdioSource({ sampling: sampler.handler }), "test__sample", { text: "x" });
    const answer = JSON.parse(result.content);
    expect(answer.answers).toEqual([]);
    expect(answer.error).toMatch(/no answer/);
    expect(result.accounting).toEqual([{ type: "llm", status: "failed", request: 1 }]);
  });

  it("works over Streamable HTTP", async () => {
    const server = await fixture.testServer();
    const sampler = recordingSampler(["over http"]);
    const source = fixture.track(
      createMcpSource(
        "remote",
        { type: "http", url: server.streamableHttpUrl },
        { sampling: sampler.handler },
      ),
    );
    const registry = new ToolRegistry(await source.start());
    const result = await pipeline(callContext(registry, "remote__sample", { text: "ping" }));
    expect(result.content).toBe("over http");
    expect(sampler.requests[0]?.prompt).toBe("User: ping");
  });
});
