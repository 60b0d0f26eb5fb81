import { afterEach, describe, expect, it } from "vitest";
import {
  type ScriptedProviderServer,
  startScriptedProviderServer,
} from "../../src/testing/scripted-provider-server.js";

let server: ScriptedProviderServer | null = null;

afterEach(async () => {
  await server?.close();
  server = null;
});

function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("startScriptedProviderServer", () => {
  it("serves one script across every wire format, in arrival order, and records which format each request spoke", async () => {
    server = await startScriptedProviderServer({
      script: [
        { kind: "text", text: "one" },
        { kind: "text", text: "two" },
        { kind: "text", text: "three" },
      ],
    });
    const anthropic = await (
      await post(`${server.baseUrls.anthropic}/messages`, { model: "m", messages: [] })
    ).json();
    const google = await (
      await post(`${server.baseUrls.google}/models/gemini-x:generateContent`, { contents: [] })
    ).json();
    const ollama = await (
      await post(`${server.baseUrls.ollama}/chat`, { model: "llama", messages: [], stream: false })
    ).json();
    expect(anthropic).toMatchObject({
      type: "message",
      content: [{ type: "text", text: "one" }],
      stop_reason: "end_turn",
    });
    expect(google).toMatchObject({
      candidates: [{ content: { role: "model", parts: [{ text: "two" }] }, finishReason: "STOP" }],
      modelVersion: "gemini-x",
    });
    expect(ollama).toMatchObject({ model: "llama", message: { content: "three" }, done: true });
    expect(server.requests.map((request) => [request.wire, request.completionIndex])).toEqual([
      ["anthropic", 0],
      ["google", 1],
      ["ollama", 2],
    ]);
    expect(server.remaining()).toBe(0);
  });

  it("answers an error step with the error format of the request's provider", async () => {
    server = await startScriptedProviderServer({
      script: [
        { kind: "error", status: 503 },
        { kind: "error", status: 503 },
        { kind: "error", status: 503 },
      ],
    });
    const anthropic = await post(`${server.baseUrls.anthropic}/messages`, {});
    const google = await post(`${server.baseUrls.google}/models/g:streamGenerateContent?alt=sse`, {});
    const openRouter = await post(`${server.baseUrls.openrouter}/chat/completions`, {});
    expect([anthropic.status, google.status, openRouter.status]).toEqual([503, 503, 503]);
    expect(await anthropic.json()).toMatchObject({ type: "error", error: { type: "api_error" } });
    expect(await google.json()).toMatchObject({ error: { code: 503, status: "INTERNAL" } });
    expect(await openRouter.json()).toMatchObject({ error: { code: 503 } });
  });

  it("streams Ollama as NDJSON unless told not to, ending with a done line", async () => {
    server = await startScriptedProviderServer({
      script: [{ kind: "text", text: "abcdefghij", stream: { chunkSize: 4 } }],
    });
    const response = await post(`${server.baseUrls.ollama}/chat`, { model: "llama", messages: [] });
    expect(response.headers.get("content-type")).toBe("application/x-ndjson");
    const lines = (await response.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { message: { content: string }; done: boolean });
    expect(lines.map((line) => line.message.content)).toEqual(["abcd", "efgh", "ij", ""]);
    expect(lines.map((line) => line.done)).toEqual([false, false, false, true]);
  });

  it("sends an error frame after the given chunks and then ends the stream", async () => {
    server = await startScriptedProviderServer({
      script: [
        {
          kind: "text",
          text: "abcdefgh",
          stream: {
            chunkSize: 4,
            errorAfterChunks: 3,
            errorFrame: { type: "error", error: { type: "overloaded_error" } },
          },
        },
      ],
    });
    const text = await (
      await post(`${server.baseUrls.anthropic}/messages`, { model: "m", stream: true })
    ).text();
    const events = text
      .trim()
      .split("\n\n")
      .map((frame) => frame.split("\n")[0]);
    expect(events).toEqual([
      "event: message_start",
      "event: content_block_start",
      "event: content_block_delta",
      "event: error",
    ]);
    expect(text).toContain('"overloaded_error"');
  });

  it("is strict across formats: a request after the last step is refused and recorded", async () => {
    server = await startScriptedProviderServer({ script: [{ kind: "text", text: "only" }] });
    await post(`${server.baseUrls["openai-responses"]}/responses`, { model: "m" });
    const extra = await post(`${server.baseUrls.openrouter}/chat/completions`, { model: "m" });
    expect(extra.status).toBe(500);
    expect(await extra.json()).toMatchObject({ error: { code: "script_exhausted" } });
    expect(server.requests.map((request) => request.scriptExhausted)).toEqual([false, true]);
  });

  it("answers paths that are no model request with 404 and does not count them", async () => {
    server = await startScriptedProviderServer({ script: [] });
    const response = await post(`${server.baseUrls.google}/models/g:countTokens`, {});
    expect(response.status).toBe(404);
    expect(server.requests[0]).toMatchObject({ wire: null, completionIndex: null });
  });
});
