import { afterEach, describe, expect, it } from "vitest";
import {
  type AgentMessage,
  systemMessage,
  toolMessage,
  userMessage,
} from "../../src/contract/agent-message.js";
import type { RequestParameters } from "../../src/contract/execution-contract.js";
import { canonicalJson } from "../../src/foundation/canonical-json.js";
import type { ModelRequest } from "../../src/model/model-client.js";
import {
  createOpenAICompatibleModelClient,
  type OpenAICompatibleModelClientOptions,
} from "../../src/model/providers/openai-compatible-model-client.js";
import { missingToolResultText } from "../../src/model/providers/to-language-model-prompt.js";
import {
  type ScriptedOpenAIServer,
  type ScriptedOpenAIServerOptions,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { nullParameters } from "./provider-fixtures.js";

let server: ScriptedOpenAIServer | null = null;

afterEach(async () => {
  await server?.close();
  server = null;
});

async function setUp(
  options: ScriptedOpenAIServerOptions,
  clientOptions: Partial<OpenAICompatibleModelClientOptions> = {},
) {
  server = await startScriptedOpenAIServer(options);
  const client = createOpenAICompatibleModelClient({
    providerName: "local",
    baseUrl: server.baseUrl,
    apiKey: "sk-secret-test-key",
    model: "test-model",
    ...clientOptions,
  });
  return { server, client };
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    messages: [systemMessage("You are terse."), userMessage("Hi")],
    tools: [],
    toolChoice: "auto",
    parameters: nullParameters,
    ...overrides,
  };
}

interface WireBody {
  model: string;
  messages: Record<string, unknown>[];
  tools?: unknown[];
  tool_choice?: unknown;
  [key: string]: unknown;
}

function wireBody(scripted: ScriptedOpenAIServer, index = 0): WireBody {
  return scripted.requests[index]?.body as WireBody;
}

describe("createOpenAICompatibleModelClient: responses", () => {
  it("round-trips text, reasoning, usage, finish reason and response id", async () => {
    const { client } = await setUp({
      script: [
        {
          kind: "text",
          text: "Hello there",
          reasoning: "greet back",
          usage: { prompt_tokens: 42, completion_tokens: 5 },
        },
      ],
    });
    const response = await client.generate(request());
    expect(client.provider).toBe("local");
    expect(client.model).toBe("test-model");
    expect(response.text).toBe("Hello there");
    expect(response.reasoning).toBe("greet back");
    expect(response.toolCalls).toEqual([]);
    expect(response.usage).toEqual({ inputTokens: 42, outputTokens: 5 });
    expect(response.finishReason).toBe("stop");
    expect(response.responseId).toBe("chatcmpl-1");
    expect(response.rawResponse).toMatchObject({
      id: "chatcmpl-1",
      choices: [{ message: { content: "Hello there" } }],
    });
  });

  it("returns several tool calls with their argument text unparsed, malformed text verbatim", async () => {
    const malformed = '{"path": "/etc/hosts", "mode": ';
    const { client } = await setUp({
      script: [
        {
          kind: "tool_calls",
          calls: [
            { id: "call_read", name: "read_file", arguments: { path: "/tmp/a" } },
            { id: "call_bad", name: "write_file", arguments: malformed },
            { id: "call_empty", name: "list", arguments: "" },
          ],
        },
      ],
    });
    const response = await client.generate(request());
    expect(response.toolCalls).toEqual([
      { id: "call_read", name: "read_file", argumentsText: '{"path":"/tmp/a"}' },
      { id: "call_bad", name: "write_file", argumentsText: malformed },
      { id: "call_empty", name: "list", argumentsText: "" },
    ]);
    expect(response.finishReason).toBe("tool-calls");
  });

  it("gives calls the provider sent without an id a deterministic id", async () => {
    const { client } = await setUp({
      script: [{ kind: "raw", body: JSON.stringify(completionWithoutCallIds()) }],
    });
    const response = await client.generate(request());
    expect(response.toolCalls.map((call) => call.id)).toEqual(["resp-9_call_0", "resp-9_call_1"]);
  });

  it("reports reasoning tokens and cached tokens when the provider does", async () => {
    const { client } = await setUp({
      script: [
        {
          kind: "text",
          text: "ok",
          usage: {
            prompt_tokens: 100,
            completion_tokens: 30,
            prompt_tokens_details: { cached_tokens: 60 },
            completion_tokens_details: { reasoning_tokens: 20 },
          },
        },
      ],
    });
    const response = await client.generate(request());
    expect(response.usage).toEqual({
      inputTokens: 100,
      outputTokens: 30,
      reasoningTokens: 20,
      cacheReadTokens: 60,
    });
  });

  it("reports null usage when the provider reports none", async () => {
    const body = {
      id: "x",
      choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
    };
    const { client } = await setUp({ script: [{ kind: "raw", body: JSON.stringify(body) }] });
    expect((await client.generate(request())).usage).toBeNull();
  });

  it("keeps the request body but never the API key in rawRequest", async () => {
    const { client, server: scripted } = await setUp(
      { script: [{ kind: "text", text: "ok" }] },
      { headers: { "x-team": "charter" } },
    );
    const response = await client.generate(request());
    expect(scripted.requests[0]?.headers.authorization).toBe("Bearer sk-secret-test-key");
    expect(scripted.requests[0]?.headers["x-team"]).toBe("charter");
    expect(response.rawRequest).toEqual(scripted.requests[0]?.body);
    expect(JSON.stringify(response.rawRequest)).not.toContain("sk-secret-test-key");
  });

  it("keeps the request body exactly as sent, for the transcript's hash, also with calls in parallel", async () => {
    const { client, server: scripted } = await setUp({
      script: [
        { kind: "text", text: "one" },
        { kind: "text", text: "two" },
      ],
    });
    // Two calls under way at once on one client: each must keep its own body.
    const [first, second] = await Promise.all([
      client.generate(request({ messages: [systemMessage("You are terse."), userMessage("first")] })),
      client.generate(
        request({
          messages: [systemMessage("You are terse."), userMessage("second")],
          parameters: { ...nullParameters, temperature: 0.5 },
        }),
      ),
    ]);
    const sent = scripted.requests.map((received) => canonicalJson(received.body));
    expect(sent).toHaveLength(2);
    // The canonical JSON (what the transcript hashes) is that of the body the server received.
    expect([canonicalJson(first.rawRequest), canonicalJson(second.rawRequest)].sort()).toEqual(sent.sort());
    expect(JSON.stringify(first.rawRequest)).toContain('"first"');
    expect(JSON.stringify(second.rawRequest)).toContain('"second"');
    expect(second.rawRequest).toMatchObject({ temperature: 0.5 });
  });

  it("makes exactly one HTTP request per call: the SDK does not retry on its own", async () => {
    const { client, server: scripted } = await setUp({ script: [{ kind: "error", status: 503 }] });
    await expect(client.generate(request())).rejects.toMatchObject({ errorClass: "server" });
    expect(scripted.requests).toHaveLength(1);
    expect(scripted.remaining()).toBe(0);
  });
});

describe("createOpenAICompatibleModelClient: parameters reach the wire exactly", () => {
  const cases: [keyof RequestParameters, string, RequestParameters[keyof RequestParameters]][] = [
    ["temperature", "temperature", 0.5],
    ["top_p", "top_p", 0.9],
    ["top_k", "top_k", 40],
    ["max_output_tokens", "max_tokens", 256],
    ["frequency_penalty", "frequency_penalty", 0.25],
    ["presence_penalty", "presence_penalty", -0.5],
    ["seed", "seed", 1234],
    ["stop_sequences", "stop", ["END", "STOP"]],
  ];
  const wireNames = cases.map(([, wireName]) => wireName);

  it.each(cases)("sends %s as %s and nothing else", async (parameter, wireName, value) => {
    const { client, server: scripted } = await setUp({ script: [{ kind: "text", text: "ok" }] });
    await client.generate(request({ parameters: { ...nullParameters, [parameter]: value } }));
    const body = wireBody(scripted);
    expect(body[wireName]).toEqual(value);
    for (const other of wireNames.filter((name) => name !== wireName)) expect(body).not.toHaveProperty(other);
  });

  it("sends top_k whatever the provider name looks like", async () => {
    for (const providerName of ["my.gateway", "local-vllm", "Ollama"]) {
      const { client, server: scripted } = await setUp(
        { script: [{ kind: "text", text: "ok" }] },
        { providerName },
      );
      await client.generate(request({ parameters: { ...nullParameters, top_k: 5 } }));
      expect(wireBody(scripted).top_k).toBe(5);
      await scripted.close();
      server = null;
    }
  });

  it("sends zero values, which are not null", async () => {
    const { client, server: scripted } = await setUp({ script: [{ kind: "text", text: "ok" }] });
    await client.generate(
      request({ parameters: { ...nullParameters, temperature: 0, seed: 0, stop_sequences: [] } }),
    );
    const body = wireBody(scripted);
    expect(body.temperature).toBe(0);
    expect(body.seed).toBe(0);
    expect(body.stop).toEqual([]);
  });

  it("omits every null parameter from the request body", async () => {
    const { client, server: scripted } = await setUp({ script: [{ kind: "text", text: "ok" }] });
    await client.generate(request());
    const body = wireBody(scripted);
    for (const name of wireNames) expect(body).not.toHaveProperty(name);
    expect(body.model).toBe("test-model");
  });

  it("sends all parameters together", async () => {
    const { client, server: scripted } = await setUp({ script: [{ kind: "text", text: "ok" }] });
    const parameters: RequestParameters = {
      temperature: 0.7,
      top_p: 0.8,
      top_k: 12,
      max_output_tokens: 999,
      frequency_penalty: 0.1,
      presence_penalty: 0.2,
      seed: 7,
      stop_sequences: ["###"],
      reasoning: null,
      reasoning_tokens: null,
    };
    await client.generate(request({ parameters }));
    expect(wireBody(scripted)).toMatchObject({
      temperature: 0.7,
      top_p: 0.8,
      top_k: 12,
      max_tokens: 999,
      frequency_penalty: 0.1,
      presence_penalty: 0.2,
      seed: 7,
      stop: ["###"],
    });
  });
});

describe("createOpenAICompatibleModelClient: the conversation on the wire", () => {
  const tools = [
    {
      name: "read_file",
      description: "Reads a file",
      inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    },
  ];

  it("sends tools as function tools with their JSON Schema and the tool choice", async () => {
    const { client, server: scripted } = await setUp({ script: [{ kind: "text", text: "ok" }] });
    await client.generate(request({ tools, toolChoice: "required" }));
    const body = wireBody(scripted);
    expect(body.tools).toEqual([
      {
        type: "function",
        function: { name: "read_file", description: "Reads a file", parameters: tools[0]?.inputSchema },
      },
    ]);
    expect(body.tool_choice).toBe("required");
  });

  it("sends no tools and no tool choice when there are no tools", async () => {
    const { client, server: scripted } = await setUp({ script: [{ kind: "text", text: "ok" }] });
    await client.generate(request());
    expect(wireBody(scripted)).not.toHaveProperty("tools");
    expect(wireBody(scripted)).not.toHaveProperty("tool_choice");
  });

  it("maps system, user, assistant (reasoning, text, tool calls) and tool messages", async () => {
    const assistant: AgentMessage = {
      role: "assistant",
      content: "Reading both.",
      reasoning: "need the files",
      tool_calls: [
        {
          id: "call_1",
          name: "read_file",
          arguments: { path: "/a" },
          source_model: "local/test-model",
          raw_payload: { arguments_text: '{ "path" : "/a" }' },
        },
        {
          id: "call_2",
          name: "read_file",
          arguments: { path: "/b" },
          source_model: "local/test-model",
          // Repaired by the adapter: the canonical object is what is sent back.
          raw_payload: { arguments_text: "{path: '/b'" },
        },
      ],
    };
    const messages = [
      systemMessage("sys"),
      userMessage("read /a and /b"),
      assistant,
      toolMessage("call_1", "read_file", "contents of a"),
      toolMessage("call_2", "read_file", "contents of b"),
    ];
    const { client, server: scripted } = await setUp({ script: [{ kind: "text", text: "done" }] });
    await client.generate(request({ messages, tools }));
    expect(wireBody(scripted).messages).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "read /a and /b" },
      {
        role: "assistant",
        content: "Reading both.",
        reasoning_content: "need the files",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "read_file", arguments: '{ "path" : "/a" }' } },
          { id: "call_2", type: "function", function: { name: "read_file", arguments: '{"path":"/b"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "contents of a" },
      { role: "tool", tool_call_id: "call_2", content: "contents of b" },
    ]);
  });

  it("keeps the conversation provider-valid: unanswered calls get a result, stray results become a user note", async () => {
    const assistant: AgentMessage = {
      role: "assistant",
      content: "",
      tool_calls: [
        { id: "call_1", name: "read_file", arguments: { path: "/a" }, source_model: "m", raw_payload: null },
        { id: "call_2", name: "read_file", arguments: { path: "/b" }, source_model: "m", raw_payload: null },
      ],
    };
    const messages = [
      userMessage("go"),
      assistant,
      toolMessage("call_rejected", "write_file", "(tool failed: arguments are not valid JSON)"),
      toolMessage("call_2", "read_file", "contents of b"),
      toolMessage("call_2", "read_file", "a second answer"),
    ];
    const { client, server: scripted } = await setUp({ script: [{ kind: "text", text: "done" }] });
    await client.generate(request({ messages, tools }));
    const wire = wireBody(scripted).messages;
    expect(wire.map((message) => message.role)).toEqual(["user", "assistant", "tool", "tool", "user"]);
    expect(wire[1]).toMatchObject({ content: null });
    expect(wire[2]).toEqual({ role: "tool", tool_call_id: "call_2", content: "contents of b" });
    expect(wire[3]).toEqual({ role: "tool", tool_call_id: "call_1", content: missingToolResultText });
    const note = wire[4]?.content as string;
    expect(note).toContain("call_rejected");
    expect(note).toContain("(tool failed: arguments are not valid JSON)");
    expect(note).toContain("a second answer");
  });

  it("answers a trailing assistant tool call so that the next request is still valid", async () => {
    const assistant: AgentMessage = {
      role: "assistant",
      content: "",
      tool_calls: [
        {
          id: "call_9",
          name: "read_file",
          arguments: {},
          source_model: "m",
          raw_payload: { arguments_text: "" },
        },
      ],
    };
    const { client, server: scripted } = await setUp({ script: [{ kind: "text", text: "done" }] });
    await client.generate(request({ messages: [userMessage("go"), assistant], tools }));
    const wire = wireBody(scripted).messages;
    expect(wire[1]).toMatchObject({ tool_calls: [{ id: "call_9", function: { arguments: "{}" } }] });
    expect(wire[2]).toEqual({ role: "tool", tool_call_id: "call_9", content: missingToolResultText });
  });
});

function completionWithoutCallIds() {
  return {
    id: "resp-9",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: null,
          tool_calls: [
            { type: "function", function: { name: "a", arguments: "{}" } },
            { id: "", type: "function", function: { name: "b", arguments: "{}" } },
          ],
        },
        finish_reason: "tool_calls",
      },
    ],
  };
}
