import { afterEach, describe, expect, it } from "vitest";
import {
  type ScriptedOpenAIServer,
  type ScriptedOpenAIServerOptions,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { delayStep } from "../../src/testing/scripted-openai-step.js";

let server: ScriptedOpenAIServer | null = null;

afterEach(async () => {
  await server?.close();
  server = null;
});

async function start(options: ScriptedOpenAIServerOptions): Promise<ScriptedOpenAIServer> {
  server = await startScriptedOpenAIServer(options);
  return server;
}

function post(baseUrl: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

interface CompletionJson {
  id: string;
  object: string;
  model: string;
  choices: {
    index: number;
    message: {
      role: string;
      content: string;
      reasoning_content?: string;
      tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
    };
    finish_reason: string;
  }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  error: { message: string; type: string; code: string | null };
}

async function json(response: Response | Promise<Response>): Promise<CompletionJson> {
  return (await (await response).json()) as CompletionJson;
}

interface Chunk {
  id: string;
  object: string;
  choices: {
    delta: {
      role?: string;
      content?: string;
      reasoning_content?: string;
      tool_calls?: { index: number; id?: string; function: { name?: string; arguments?: string } }[];
    };
    finish_reason: string | null;
  }[];
  usage?: { prompt_tokens: number; completion_tokens: number };
}

async function readSse(response: Response): Promise<{ chunks: Chunk[]; done: boolean }> {
  const text = await response.text();
  const events = text.split("\n\n").filter((event) => event !== "");
  const chunks: Chunk[] = [];
  let done = false;
  for (const event of events) {
    expect(event.startsWith("data: ")).toBe(true);
    const payload = event.slice("data: ".length);
    if (payload === "[DONE]") done = true;
    else chunks.push(JSON.parse(payload) as Chunk);
  }
  return { chunks, done };
}

describe("startScriptedOpenAIServer", () => {
  it("listens on 127.0.0.1 under /v1 and answers a text step as a chat completion", async () => {
    const { baseUrl } = await start({ script: [{ kind: "text", text: "hello", reasoning: "thinking" }] });
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const response = await post(baseUrl, { model: "m1", messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    const body = await json(response);
    expect(body).toMatchObject({
      id: "chatcmpl-1",
      object: "chat.completion",
      model: "m1",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "hello", reasoning_content: "thinking" },
          finish_reason: "stop",
        },
      ],
    });
    expect(body.choices[0]?.message.tool_calls).toBeUndefined();
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
  });

  it("answers tool calls with object arguments serialised and string arguments verbatim", async () => {
    const { baseUrl } = await start({
      script: [
        {
          kind: "tool_calls",
          text: "calling",
          calls: [
            { id: "call_a", name: "search", arguments: { query: "cats" } },
            { name: "broken", arguments: '{"path": "/tmp", ' },
          ],
        },
      ],
    });
    const body = await json(post(baseUrl, { model: "m", messages: [] }));
    expect(body.choices[0]?.finish_reason).toBe("tool_calls");
    expect(body.choices[0]?.message.content).toBe("calling");
    expect(body.choices[0]?.message.tool_calls).toEqual([
      { id: "call_a", type: "function", function: { name: "search", arguments: '{"query":"cats"}' } },
      { id: "call_1_1", type: "function", function: { name: "broken", arguments: '{"path": "/tmp", ' } },
    ]);
  });

  it("answers empty and reasoning-only steps without content or tool calls", async () => {
    const { baseUrl } = await start({
      script: [{ kind: "empty" }, { kind: "reasoning_only", reasoning: "only thoughts" }],
    });
    const empty = await json(post(baseUrl, { model: "m", messages: [] }));
    expect(empty.choices[0]?.message).toEqual({ role: "assistant", content: "" });
    const reasoningOnly = await json(post(baseUrl, { model: "m", messages: [] }));
    expect(reasoningOnly.id).toBe("chatcmpl-2");
    expect(reasoningOnly.choices[0]?.message).toEqual({
      role: "assistant",
      content: "",
      reasoning_content: "only thoughts",
    });
  });

  it("lets a step override usage and finish reason", async () => {
    const { baseUrl } = await start({
      script: [
        {
          kind: "text",
          text: "cut",
          finishReason: "length",
          usage: { prompt_tokens: 1234, completion_tokens: 7 },
        },
      ],
    });
    const body = await json(post(baseUrl, { model: "m", messages: [] }));
    expect(body.choices[0]?.finish_reason).toBe("length");
    expect(body.usage).toEqual({ prompt_tokens: 1234, completion_tokens: 7, total_tokens: 1241 });
  });

  it("estimates prompt tokens from the request body length", async () => {
    const { baseUrl } = await start({ script: [{ kind: "text", text: "x" }] });
    const request = { model: "m", messages: [{ role: "user", content: "a".repeat(400) }] };
    const body = await json(post(baseUrl, request));
    expect(body.usage.prompt_tokens).toBe(Math.ceil(JSON.stringify(request).length / 4));
  });

  it("streams SSE chunks with arguments split across chunks and a final [DONE]", async () => {
    const argumentsObject = { query: "a fairly long query string", limit: 10 };
    const { baseUrl } = await start({
      script: [
        {
          kind: "tool_calls",
          text: "Let me look that up.",
          reasoning: "need to search",
          calls: [
            { id: "c1", name: "search", arguments: argumentsObject },
            { id: "c2", name: "noop", arguments: "" },
          ],
          stream: { chunkSize: 5 },
        },
      ],
    });
    const response = await post(baseUrl, {
      model: "m",
      messages: [],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const { chunks, done } = await readSse(response);
    expect(done).toBe(true);
    expect(
      chunks.every((chunk) => chunk.id === "chatcmpl-1" && chunk.object === "chat.completion.chunk"),
    ).toBe(true);
    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");

    let content = "";
    let reasoning = "";
    const calls = new Map<number, { id?: string; name?: string; arguments: string; pieces: number }>();
    let finishReason: string | null = null;
    for (const chunk of chunks) {
      const choice = chunk.choices[0];
      if (choice === undefined) continue;
      content += choice.delta.content ?? "";
      reasoning += choice.delta.reasoning_content ?? "";
      for (const delta of choice.delta.tool_calls ?? []) {
        const call = calls.get(delta.index) ?? { arguments: "", pieces: 0 };
        if (delta.id !== undefined) call.id = delta.id;
        if (delta.function.name !== undefined) call.name = delta.function.name;
        if (delta.function.arguments) {
          call.arguments += delta.function.arguments;
          call.pieces++;
        }
        calls.set(delta.index, call);
      }
      finishReason = choice.finish_reason ?? finishReason;
    }
    expect(content).toBe("Let me look that up.");
    expect(reasoning).toBe("need to search");
    expect(calls.get(0)).toMatchObject({
      id: "c1",
      name: "search",
      arguments: JSON.stringify(argumentsObject),
    });
    expect(calls.get(0)?.pieces).toBeGreaterThan(1);
    expect(calls.get(1)).toMatchObject({ id: "c2", name: "noop", arguments: "" });
    expect(finishReason).toBe("tool_calls");
    const usageChunk = chunks.at(-1);
    expect(usageChunk?.choices).toEqual([]);
    expect(usageChunk?.usage?.prompt_tokens).toBeGreaterThan(0);
  });

  it("omits the usage chunk when the streaming request did not ask for it", async () => {
    const { baseUrl } = await start({ script: [{ kind: "text", text: "hi" }] });
    const { chunks } = await readSse(await post(baseUrl, { model: "m", messages: [], stream: true }));
    expect(chunks.some((chunk) => chunk.usage !== undefined)).toBe(false);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("stop");
  });

  it("answers error steps with their status, body and headers", async () => {
    const { baseUrl } = await start({
      script: [
        {
          kind: "error",
          status: 429,
          body: { error: { message: "slow down", type: "requests", code: "rate_limit_exceeded" } },
          headers: { "Retry-After": "7" },
        },
        { kind: "error", status: 503 },
      ],
    });
    const limited = await post(baseUrl, { model: "m", messages: [] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
    expect(await json(limited)).toEqual({
      error: { message: "slow down", type: "requests", code: "rate_limit_exceeded" },
    });
    const unavailable = await post(baseUrl, { model: "m", messages: [] });
    expect(unavailable.status).toBe(503);
    const body = await json(unavailable);
    expect(typeof body.error.message).toBe("string");
  });

  it("answers a raw step with its exact body", async () => {
    const { baseUrl } = await start({ script: [{ kind: "raw", body: "{not json" }] });
    const response = await post(baseUrl, { model: "m", messages: [] });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("{not json");
  });

  it("destroys the connection on a disconnect step", async () => {
    const { baseUrl } = await start({ script: [{ kind: "disconnect" }, { kind: "text", text: "after" }] });
    await expect(post(baseUrl, { model: "m", messages: [] })).rejects.toBeInstanceOf(TypeError);
    const body = await json(post(baseUrl, { model: "m", messages: [] }));
    expect(body.choices[0]?.message.content).toBe("after");
  });

  it("answers a delay step with its inner step", async () => {
    const { baseUrl } = await start({
      script: [delayStep(5, { kind: "text", text: "late" })],
    });
    const body = await json(post(baseUrl, { model: "m", messages: [] }));
    expect(body.choices[0]?.message.content).toBe("late");
  });

  it("records every request in order with parsed body and headers", async () => {
    const scripted = await start({
      script: [
        { kind: "text", text: "a" },
        { kind: "text", text: "b" },
      ],
    });
    await post(
      scripted.baseUrl,
      { model: "m", messages: [{ role: "user", content: "one" }] },
      { "x-test": "1" },
    );
    await post(scripted.baseUrl, { model: "m", messages: [{ role: "user", content: "two" }] });
    expect(scripted.requests).toHaveLength(2);
    expect(scripted.requests[0]).toMatchObject({
      method: "POST",
      path: "/v1/chat/completions",
      completionIndex: 0,
      scriptExhausted: false,
      body: { model: "m", messages: [{ role: "user", content: "one" }] },
    });
    expect(scripted.requests[0]?.headers["x-test"]).toBe("1");
    expect(scripted.requests[1]?.completionIndex).toBe(1);
    expect(scripted.remaining()).toBe(0);
  });

  it("is strict: a request after the script is exhausted gets HTTP 500 script_exhausted and is recorded", async () => {
    const scripted = await start({ script: [{ kind: "text", text: "only" }] });
    expect(scripted.remaining()).toBe(1);
    await post(scripted.baseUrl, { model: "m", messages: [] });
    const extra = await post(scripted.baseUrl, { model: "m", messages: [] });
    expect(extra.status).toBe(500);
    expect((await json(extra)).error.code).toBe("script_exhausted");
    expect(scripted.requests.map((request) => request.scriptExhausted)).toEqual([false, true]);
  });

  it("answers unknown paths with 404 without consuming the script", async () => {
    const scripted = await start({ script: [{ kind: "text", text: "kept" }] });
    const response = await fetch(`${scripted.baseUrl}/models`);
    expect(response.status).toBe(404);
    expect(scripted.remaining()).toBe(1);
    expect(scripted.requests[0]?.completionIndex).toBeNull();
  });

  it("asks a respond function for each step when given one", async () => {
    const scripted = await start({
      respond: (request, index) => {
        const messages = (request.body as { messages: { content: string }[] }).messages;
        return { kind: "text", text: `${index}:${messages.at(-1)?.content}` };
      },
    });
    const first = await json(post(scripted.baseUrl, { model: "m", messages: [{ content: "x" }] }));
    const second = await json(post(scripted.baseUrl, { model: "m", messages: [{ content: "y" }] }));
    expect(first.choices[0]?.message.content).toBe("0:x");
    expect(second.choices[0]?.message.content).toBe("1:y");
    expect(scripted.remaining()).toBe(0);
  });

  it("closes while a delayed answer is still pending", async () => {
    let arrived!: () => void;
    const arrival = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const scripted = await start({
      respond: () => {
        arrived();
        return delayStep(60_000, { kind: "text", text: "never" });
      },
    });
    const pending = post(scripted.baseUrl, { model: "m", messages: [] }).then(
      () => "answered",
      () => "failed",
    );
    await arrival;
    await scripted.close();
    server = null;
    expect(await pending).toBe("failed");
  });
});
