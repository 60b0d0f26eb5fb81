// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are REST tool placeholders, not templates.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expandPlaceholders } from "../../src/config/expand-placeholders.js";
import { restToolSchema } from "../../src/config/rest-tool-configuration-schema.js";
import type { ToolInvocation } from "../../src/contract/agent-message.js";
import { CharterError } from "../../src/foundation/charter-error.js";
import { configureToolIdempotency } from "../../src/runner/configure-tool-idempotency.js";
import { guardToolCalls } from "../../src/runner/guard-tool-calls.js";
import { type RestTestServer, startRestTestServer } from "../../src/testing/rest-test-server.js";
import { createDefaultPipeline } from "../../src/tools/create-default-pipeline.js";
import type { RestToolDefinition } from "../../src/tools/sources/rest-tool-definition.js";
import { createRestToolSource } from "../../src/tools/sources/rest-tool-source.js";
import { ToolRegistry } from "../../src/tools/tool-registry.js";
import { callContext, invocation } from "./tool-call-fixture.js";

const pipeline = createDefaultPipeline();
let server: RestTestServer;

beforeAll(async () => {
  server = await startRestTestServer();
});

afterAll(() => server.close());

beforeEach(() => {
  (server.requests as unknown[]).length = 0;
  server.respondWith((request) => ({
    body: { method: request.method, path: request.path, query: request.query, body: request.body },
  }));
});

async function registryOf(
  tools: Record<string, RestToolDefinition>,
  options: Parameters<typeof createRestToolSource>[1] = {},
) {
  return new ToolRegistry(await createRestToolSource(tools, options).start());
}

async function configurationError(tools: Record<string, RestToolDefinition>): Promise<CharterError> {
  const error = await createRestToolSource(tools)
    .start()
    .then(
      () => null,
      (rejection: unknown) => rejection,
    );
  if (!CharterError.isInstance(error)) throw new Error(`expected a CharterError, got ${String(error)}`);
  return error;
}

const itemSchema = {
  type: "object",
  properties: {
    id: { type: "string" },
    query: { type: "string" },
    limit: { type: "integer", minimum: 1 },
  },
  required: ["id"],
  additionalProperties: false,
};

describe("REST tools", () => {
  it("are offered as rest__<name> with their parameters schema, and URL-encode placeholders", async () => {
    const registry = await registryOf({
      get_item: {
        method: "GET",
        url: `${server.url}/items/\${parameters.id}?q=\${parameters.query}&limit=\${parameters.limit}`,
        parametersSchema: itemSchema,
        description: "Reads one item.",
      },
    });
    const manifest = registry.get("rest__get_item")!.manifest;
    expect(manifest).toMatchObject({
      name: "rest__get_item",
      description: "Reads one item.",
      input_schema: itemSchema,
      source: { kind: "function", server: "rest", tool: "get_item" },
      annotations: { readOnlyHint: true, openWorldHint: true },
    });

    const result = await pipeline(
      callContext(registry, "rest__get_item", { id: "a/b c?", query: "x&y=z", limit: 5 }),
    );
    expect(result).toMatchObject({ status: "ok", executed: true });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({
      method: "GET",
      path: "/items/a%2Fb%20c%3F",
      query: { q: "x&y=z", limit: "5" },
      body: "",
    });
    // A JSON response is the output, pretty-printed.
    const expected = {
      method: "GET",
      path: "/items/a%2Fb%20c%3F",
      query: { q: "x&y=z", limit: "5" },
      body: "",
    };
    expect(result.content).toBe(JSON.stringify(expected, null, 2));
  });

  it("fills headers and the JSON body, keeping each parameter's JSON type where a value is one placeholder", async () => {
    const registry = await registryOf({
      create_issue: {
        method: "POST",
        url: `${server.url}/repos/\${parameters.repo}/issues`,
        headers: { Authorization: "Bearer static-token", "X-Request-Id": "req-${parameters.requestId}" },
        parametersSchema: {
          type: "object",
          properties: {
            repo: { type: "string" },
            requestId: { type: "integer" },
            title: { type: "string" },
            count: { type: "integer" },
            labels: { type: "array", items: { type: "string" } },
            author: { type: "object", properties: { name: { type: "string" } } },
            milestone: { type: "string" },
          },
          required: ["repo", "requestId", "title", "count", "labels", "author"],
        },
        bodyTemplate: {
          title: "${parameters.title}",
          count: "${parameters.count}",
          labels: "${parameters.labels}",
          note: "filed by ${parameters.author.name} (${parameters.count} so far)",
          milestone: "${parameters.milestone}",
          list: ["${parameters.count}", "${parameters.milestone}", "fixed"],
          "${parameters.title}": "keys are never expanded",
        },
      },
    });
    const result = await pipeline(
      callContext(registry, "rest__create_issue", {
        repo: "charter",
        requestId: 7,
        title: "Crash on start",
        count: 3,
        labels: ["bug", "p1"],
        author: { name: "ann" },
      }),
    );
    expect(result.status).toBe("ok");
    const [request] = server.requests;
    expect(request).toMatchObject({ method: "POST", path: "/repos/charter/issues" });
    expect(request!.headers).toMatchObject({
      authorization: "Bearer static-token",
      "x-request-id": "req-7",
      "content-type": "application/json",
    });
    expect(JSON.parse(request!.body)).toEqual({
      title: "Crash on start",
      count: 3,
      labels: ["bug", "p1"],
      note: "filed by ann (3 so far)",
      list: [3, null, "fixed"],
      "${parameters.title}": "keys are never expanded",
    });
    expect(registry.get("rest__create_issue")!.manifest.annotations).toEqual({ openWorldHint: true });
  });

  it("sends the run's correlation id as x-correlation-id, unless the tool configures that header itself", async () => {
    const registry = await registryOf(
      {
        plain: { method: "GET", url: `${server.url}/plain` },
        traced: { method: "GET", url: `${server.url}/traced`, headers: { "X-Correlation-Id": "configured" } },
      },
      { correlationId: "req-42" },
    );
    expect((await pipeline(callContext(registry, "rest__plain", {}))).status).toBe("ok");
    expect((await pipeline(callContext(registry, "rest__traced", {}))).status).toBe("ok");
    expect(server.requests.map((request) => request.headers["x-correlation-id"])).toEqual([
      "req-42",
      "configured",
    ]);
  });

  it("validates the arguments against parametersSchema before any request is made", async () => {
    const registry = await registryOf({
      get_item: { method: "GET", url: `${server.url}/items/\${parameters.id}`, parametersSchema: itemSchema },
    });
    const missing = await pipeline(callContext(registry, "rest__get_item", { query: "x" }));
    expect(missing).toMatchObject({ status: "failed", error_code: "TOOL_INPUT_INVALID", executed: false });
    const wrongType = await pipeline(callContext(registry, "rest__get_item", { id: "1", limit: "ten" }));
    expect(wrongType).toMatchObject({ status: "failed", error_code: "TOOL_INPUT_INVALID" });
    const unknown = await pipeline(callContext(registry, "rest__get_item", { id: "1", extra: true }));
    expect(unknown).toMatchObject({ status: "failed", error_code: "TOOL_INPUT_INVALID" });
    expect(server.requests).toEqual([]);
  });

  it("turns a non-2xx response into a failed result naming the status, with the body", async () => {
    const registry = await registryOf({
      missing: { method: "DELETE", url: `${server.url}/gone` },
    });
    server.respondWith(() => ({ status: 404, body: { error: "no such thing" } }));
    const notFound = await pipeline(callContext(registry, "rest__missing"));
    expect(notFound).toMatchObject({ status: "failed", error_code: "TOOL_EXECUTION_FAILED", executed: true });
    expect(notFound.content).toBe(
      `(tool failed: HTTP 404 Not Found: ${JSON.stringify({ error: "no such thing" }, null, 2)})`,
    );
    server.respondWith(() => ({ status: 503, headers: { "content-type": "text/plain" }, body: "" }));
    const unavailable = await pipeline(callContext(registry, "rest__missing"));
    expect(unavailable.content).toBe("(tool failed: HTTP 503 Service Unavailable)");
  });

  it("returns text as it is, describes binary content, and says when a body is empty", async () => {
    const registry = await registryOf({ fetch: { method: "GET", url: `${server.url}/thing` } });
    server.respondWith(() => ({
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: "  plain\ntext\n",
    }));
    expect((await pipeline(callContext(registry, "rest__fetch"))).content).toBe("  plain\ntext\n");
    server.respondWith(() => ({ headers: { "content-type": "image/png" }, body: Buffer.alloc(1234) }));
    expect(JSON.parse((await pipeline(callContext(registry, "rest__fetch"))).content)).toEqual({
      contentType: "image/png",
      bytes: 1234,
    });
    server.respondWith(() => ({ status: 204 }));
    const empty = await pipeline(callContext(registry, "rest__fetch"));
    expect(empty).toMatchObject({ status: "ok", content: "HTTP 204 No Content (empty body)" });
    server.respondWith(() => ({ headers: { "content-type": "application/json" }, body: "{not json" }));
    expect((await pipeline(callContext(registry, "rest__fetch"))).content).toBe("{not json");
  });

  it("describes a HEAD response by its status and headers", async () => {
    const registry = await registryOf({ probe: { method: "HEAD", url: `${server.url}/thing` } });
    server.respondWith(() => ({ headers: { "x-version": "42" } }));
    const result = await pipeline(callContext(registry, "rest__probe"));
    expect(result.status).toBe("ok");
    expect(JSON.parse(result.content)).toMatchObject({ status: 200, headers: { "x-version": "42" } });
    expect(server.requests[0]!.method).toBe("HEAD");
  });

  it("ends a request past its own timeout with TOOL_TIMEOUT", async () => {
    const registry = await registryOf({ stuck: { method: "GET", url: `${server.url}/stuck`, timeout: 50 } });
    server.respondWith(() => new Promise<never>(() => {}));
    const result = await pipeline(callContext(registry, "rest__stuck"));
    expect(result).toMatchObject({ status: "failed", error_code: "TOOL_TIMEOUT", executed: true });
  });

  it("refuses a response body over maxResponseBytes", async () => {
    const registry = await registryOf(
      { big: { method: "GET", url: `${server.url}/big` } },
      { maxResponseBytes: 1000 },
    );
    server.respondWith(() => ({ headers: { "content-type": "text/plain" }, body: "x".repeat(5000) }));
    const result = await pipeline(callContext(registry, "rest__big"));
    // Too large is not malformed: a tool failure the model is told about, not the end of the run.
    expect(result).toMatchObject({ status: "failed", error_code: "TOOL_RESPONSE_TOO_LARGE" });
  });

  it("reports a refused connection as a failed result with the system code", async () => {
    const closed = await startRestTestServer();
    await closed.close();
    const registry = await registryOf({ down: { method: "GET", url: `${closed.url}/x` } });
    const result = await pipeline(callContext(registry, "rest__down"));
    expect(result).toMatchObject({ status: "failed", error_code: "TOOL_EXECUTION_FAILED", executed: true });
    expect(result.content).toContain("ECONNREFUSED");
  });

  it("refuses a header value with a line break, without making the request", async () => {
    const registry = await registryOf({
      tagged: {
        method: "GET",
        url: `${server.url}/t`,
        headers: { "X-Tag": "${parameters.tag}" },
        parametersSchema: { type: "object", properties: { tag: { type: "string" } } },
      },
    });
    const result = await pipeline(callContext(registry, "rest__tagged", { tag: "a\r\nX-Admin: yes" }));
    expect(result).toMatchObject({ status: "failed", error_code: "TOOL_INPUT_INVALID" });
    expect(server.requests).toEqual([]);
  });

  it("refuses a parameter that would make a path segment '.' or '..', in any spelling, without a request", async () => {
    const registry = await registryOf({
      items: {
        method: "GET",
        url: `${server.url}/tenant/acme/\${parameters.x}/\${parameters.x}/items?q=\${parameters.x}`,
        parametersSchema: { type: "object", properties: { x: { type: "string" } }, required: ["x"] },
      },
      suffixed: {
        method: "GET",
        url: `${server.url}/tenant/acme/\${parameters.x}%2e/items`,
        parametersSchema: { type: "object", properties: { x: { type: "string" } }, required: ["x"] },
      },
    });
    for (const x of ["..", ".", "%2e%2e", "%2E."]) {
      const result = await pipeline(callContext(registry, "rest__items", { x }));
      if (x.startsWith("%")) {
        // Percent signs are encoded, so such a value stays the literal text of its own segment.
        expect(result.status).toBe("ok");
        expect(server.requests.at(-1)!.path).toBe(
          `/tenant/acme/${encodeURIComponent(x)}/${encodeURIComponent(x)}/items`,
        );
        continue;
      }
      expect(result).toMatchObject({ status: "failed", error_code: "TOOL_PATH_TRAVERSAL", executed: true });
    }
    // A template's own `%2e` beside the value counts too: "." + "%2e" is "..".
    const suffixed = await pipeline(callContext(registry, "rest__suffixed", { x: "." }));
    expect(suffixed).toMatchObject({ status: "failed", error_code: "TOOL_PATH_TRAVERSAL" });
    expect(server.requests.map((request) => request.path)).not.toContain("/items");
    expect(server.requests.every((request) => request.path.startsWith("/tenant/acme/"))).toBe(true);
    // Slashes and dots inside a longer value stay in the segment.
    const dotted = await pipeline(callContext(registry, "rest__items", { x: "../a/.." }));
    expect(dotted.status).toBe("ok");
    expect(server.requests.at(-1)!.path).toBe("/tenant/acme/..%2Fa%2F../..%2Fa%2F../items");
  });

  describe("redirects", () => {
    let other: RestTestServer;
    beforeAll(async () => {
      other = await startRestTestServer();
    });
    afterAll(() => other.close());
    beforeEach(() => {
      (other.requests as unknown[]).length = 0;
    });

    const tokenHeader = { Authorization: "Bearer tool-token-1234", "X-Api-Token": "tool-token-1234" };

    it("never follows a redirect to another origin with the configured headers or the body", async () => {
      const registry = await registryOf({
        read: { method: "GET", url: `${server.url}/start`, headers: tokenHeader },
        write: {
          method: "POST",
          url: `${server.url}/start`,
          bodyTemplate: { note: "${parameters.note}" },
          parametersSchema: { type: "object", properties: { note: { type: "string" } } },
        },
      });
      server.respondWith(() => ({ status: 302, headers: { location: `${other.url}/steal?token=x` } }));
      const read = await pipeline(callContext(registry, "rest__read"));
      expect(read).toMatchObject({ status: "failed", error_code: "TOOL_REDIRECT_REFUSED", executed: true });
      expect(read.content).toContain(`${other.url}/steal`);
      expect(read.content).not.toContain("token=x");
      server.respondWith(() => ({ status: 307, headers: { location: `${other.url}/steal` } }));
      const write = await pipeline(callContext(registry, "rest__write", { note: "private" }));
      expect(write).toMatchObject({ status: "failed", error_code: "TOOL_REDIRECT_REFUSED" });
      expect(other.requests).toEqual([]);
    });

    it("follows a redirect within the origin with its headers, and a 307's body", async () => {
      const registry = await registryOf({
        read: { method: "GET", url: `${server.url}/start`, headers: tokenHeader },
        write: {
          method: "POST",
          url: `${server.url}/start`,
          headers: tokenHeader,
          bodyTemplate: { note: "${parameters.note}" },
          parametersSchema: { type: "object", properties: { note: { type: "string" } } },
        },
      });
      server.respondWith((request) =>
        request.path === "/start"
          ? { status: request.method === "POST" ? 307 : 301, headers: { location: "/moved" } }
          : { body: { method: request.method, path: request.path, body: request.body } },
      );
      const read = await pipeline(callContext(registry, "rest__read"));
      expect(read.status).toBe("ok");
      expect(JSON.parse(read.content)).toEqual({ method: "GET", path: "/moved", body: "" });
      const write = await pipeline(callContext(registry, "rest__write", { note: "kept" }));
      expect(JSON.parse(write.content)).toEqual({ method: "POST", path: "/moved", body: '{"note":"kept"}' });
      expect(server.requests.filter((request) => request.path === "/moved")).toHaveLength(2);
      for (const request of server.requests)
        expect(request.headers.authorization).toBe(tokenHeader.Authorization);
    });

    it("follows a redirect to another origin when the request carries no configured header and no body", async () => {
      const registry = await registryOf({ open: { method: "GET", url: `${server.url}/start` } });
      server.respondWith(() => ({ status: 301, headers: { location: `${other.url}/public` } }));
      const result = await pipeline(callContext(registry, "rest__open"));
      expect(result.status).toBe("ok");
      expect(other.requests.map((request) => request.path)).toEqual(["/public"]);
    });
  });

  it("keeps credentials and the query out of the default description", async () => {
    const registry = await registryOf({
      search: { method: "GET", url: "https://user:secret@api.example.test/search?api_key=SECRET&q=x" },
    });
    expect(registry.get("rest__search")!.manifest.description).toBe("GET https://api.example.test/search");
  });

  it("rejects mistakes in a definition at start with CONFIGURATION_INVALID naming the key", async () => {
    const cases: [Record<string, RestToolDefinition>, string][] = [
      [{ "bad name": { method: "GET", url: `${server.url}/x` } }, "restTools.bad name.name"],
      [{ t: { method: "GET", url: "/relative/${parameters.id}" } }, "restTools.t.url"],
      [{ t: { method: "GET", url: `${server.url}/\${parameters.}` } }, "restTools.t.url"],
      [
        { t: { method: "GET", url: `${server.url}/\${parameters.idd}`, parametersSchema: itemSchema } },
        "restTools.t.parametersSchema",
      ],
      [{ t: { method: "GET", url: `${server.url}/x`, bodyTemplate: { a: 1 } } }, "restTools.t.bodyTemplate"],
      [
        { t: { method: "GET", url: `${server.url}/x`, headers: { "Bad Header": "v" } } },
        "restTools.t.headers",
      ],
      [
        { t: { method: "GET", url: `${server.url}/x`, parametersSchema: { type: "string" } } },
        "restTools.t.parametersSchema",
      ],
    ];
    for (const [tools, key] of cases) {
      const error = await configurationError(tools);
      expect(error.code).toBe("CONFIGURATION_INVALID");
      expect(error.details.key).toBe(key);
    }
    expect(server.requests).toEqual([]);
  });
});

// seed 004 (Idempotency & Retry Safety)
describe("REST tools on resume and approval", () => {
  /** The durable-run guard over the real REST tools: `inFlight` is the call the process died during. */
  async function guarded(
    options: { inFlight?: ToolInvocation; approve?: ToolInvocation; idempotentTools?: string[] } = {},
  ) {
    const tools = configureToolIdempotency(
      await createRestToolSource({
        remove_item: { method: "DELETE", url: `${server.url}/items/1` },
        replace_item: { method: "PUT", url: `${server.url}/items/1` },
        read_item: { method: "GET", url: `${server.url}/items/1` },
      }).start(),
      { idempotentTools: options.idempotentTools ?? [] },
    );
    const registry = new ToolRegistry(tools);
    const execute = guardToolCalls(
      (call) => pipeline(callContext(registry, call.name, call.arguments as Record<string, unknown>)),
      {
        manifest: registry.manifest(),
        possiblyInFlight: options.inFlight === undefined ? null : { turn: 1, call: options.inFlight },
        ...(options.approve !== undefined
          ? { decisions: [{ turn: 1, call: options.approve, decision: "approve" as const }] }
          : {}),
      },
    );
    return (call: ReturnType<typeof invocation>) =>
      execute(call, { signal: new AbortController().signal, previousTool: null, turn: 1 });
  }

  it("never re-runs a DELETE or a PUT that was in flight; only GET is run again", async () => {
    for (const name of ["rest__remove_item", "rest__replace_item"]) {
      const call = invocation(name);
      const result = await (await guarded({ inFlight: call }))(call);
      expect(result).toMatchObject({ status: "failed", error_code: "TOOL_OUTCOME_UNKNOWN", executed: false });
    }
    expect(server.requests).toEqual([]);
    const read = invocation("rest__read_item");
    expect(await (await guarded({ inFlight: read }))(read)).toMatchObject({ status: "ok" });
    expect(server.requests.map((request) => request.method)).toEqual(["GET"]);
  });

  it("asks before a DELETE runs (a confirmation the model cannot forge); an approved one runs once", async () => {
    const call = invocation("rest__remove_item");
    expect(await (await guarded())(call)).toMatchObject({ error_code: "APPROVAL_REQUIRED", executed: false });
    expect(server.requests).toEqual([]);
    expect(await (await guarded({ approve: call }))(call)).toMatchObject({ status: "ok" });
    expect(server.requests.map((request) => request.method)).toEqual(["DELETE"]);
  });

  it("re-runs a PUT in flight when configuration declares it idempotent", async () => {
    const call = invocation("rest__replace_item");
    const execute = await guarded({ inFlight: call, idempotentTools: ["rest__replace_item"] });
    expect(await execute(call)).toMatchObject({ status: "ok" });
    expect(server.requests.map((request) => request.method)).toEqual(["PUT"]);
  });
});

describe("REST tools from configuration", () => {
  it("keep ${parameters.x} when configuration placeholders are expanded, and both reach the wire", async () => {
    const file = {
      restTools: {
        lookup: {
          method: "get",
          url: `${server.url}/users/\${parameters.user}?token=\${LOOKUP_TOKEN}`,
          headers: { "X-Api-Key": "${LOOKUP_TOKEN}", "X-User": "${parameters.user}" },
          parametersSchema: {
            type: "object",
            properties: { user: { type: "string" } },
            required: ["user"],
          },
          timeout: "5s",
        },
      },
    };
    // The loader expands each file with exactly this function before validating it.
    const expanded = expandPlaceholders(file, {
      file: "/etc/charter/charter.json",
      fileVariables: new Map([["LOOKUP_TOKEN", "tok-123"]]),
      processEnvironment: {},
    }) as typeof file;
    expect(expanded.restTools.lookup.url).toBe(`${server.url}/users/\${parameters.user}?token=tok-123`);
    expect(expanded.restTools.lookup.headers).toEqual({
      "X-Api-Key": "tok-123",
      "X-User": "${parameters.user}",
    });

    const definition = restToolSchema.parse(expanded.restTools.lookup);
    expect(definition).toMatchObject({ method: "GET", timeout: 5000 });
    const registry = await registryOf({ lookup: definition });
    const result = await pipeline(callContext(registry, "rest__lookup", { user: "ann lee" }));
    expect(result.status).toBe("ok");
    expect(server.requests[0]).toMatchObject({
      path: "/users/ann%20lee",
      query: { token: "tok-123" },
      headers: { "x-api-key": "tok-123", "x-user": "ann lee" },
    });
  });
});
