import { afterEach, describe, expect, it } from "vitest";
import { ModelCallError, type ModelErrorClass } from "../../src/model/model-call-error.js";
import type { ModelDelta } from "../../src/model/model-client.js";
import {
  type ScriptedProviderServer,
  startScriptedProviderServer,
} from "../../src/testing/scripted-provider-server.js";
import type { ScriptedWireFormatName } from "../../src/testing/scripted-wire-format.js";
import { clientFor, type ProviderCase, providerCases, readFileTool, request } from "./provider-fixtures.js";

let server: ScriptedProviderServer | null = null;

afterEach(async () => {
  await server?.close();
  server = null;
});

/** Frames each wire format sends before the first text delta of a text-only answer. */
const framesBeforeText: Readonly<Record<ScriptedWireFormatName, number>> = {
  "openai-chat": 1,
  "openai-responses": 3,
  anthropic: 2,
  google: 0,
  ollama: 0,
  openrouter: 1,
};

/** An error each provider reports inside a stream that is under way, in its own format, and its class. */
const midStreamErrors: Readonly<Record<ScriptedWireFormatName, readonly [unknown, ModelErrorClass][]>> = {
  "openai-chat": [
    [{ error: { message: "The server had an error", type: "server_error", code: null } }, "server"],
  ],
  "openai-responses": [
    [
      {
        type: "error",
        sequence_number: 9,
        code: "server_error",
        message: "The server had an error",
        param: null,
      },
      "server",
    ],
    [
      {
        type: "response.failed",
        sequence_number: 9,
        response: { id: "resp_1", status: "failed", error: { code: "insufficient_quota", message: "quota" } },
      },
      "quota",
    ],
  ],
  anthropic: [
    [{ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, "server"],
    [{ type: "error", error: { type: "rate_limit_error", message: "Slow down" } }, "rate_limit"],
  ],
  google: [
    [{ error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } }, "server"],
    [{ error: { code: 429, message: "Quota exceeded", status: "RESOURCE_EXHAUSTED" } }, "rate_limit"],
  ],
  // ollama-ai-provider-v2 drops lines it cannot read, this one included: what Charter sees is a stream that
  // ended before Ollama's final `done` line, which is a network failure.
  ollama: [[{ error: "model runner has unexpectedly stopped" }, "network"]],
  openrouter: [
    [
      {
        id: "gen-1",
        object: "chat.completion.chunk",
        created: 1,
        model: "vendor/test-model",
        error: { code: 502, message: "Provider returned error" },
        choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
      },
      "server",
    ],
    [
      {
        id: "gen-1",
        object: "chat.completion.chunk",
        created: 1,
        model: "vendor/test-model",
        error: { code: 429, message: "Rate limited upstream" },
        choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
      },
      "rate_limit",
    ],
  ],
};

const text = "Hello there, friend";

function textOf(deltas: readonly ModelDelta[]): string {
  return deltas.map((delta) => (delta.type === "text" ? delta.text : "")).join("");
}

async function rejection(promise: Promise<unknown>): Promise<ModelCallError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(ModelCallError.isModelCallError(error)).toBe(true);
  return error as ModelCallError;
}

describe.each(providerCases)("streaming: $label", (providerCase: ProviderCase) => {
  it("delivers deltas in order and assembles the same response as without streaming", async () => {
    const step = {
      kind: "tool_calls",
      text,
      reasoning: "think first",
      calls: [{ id: "call_a", name: "read_file", arguments: { path: "/a" } }],
      usage: { prompt_tokens: 30, completion_tokens: 9 },
    } as const;
    server = await startScriptedProviderServer({ script: [step, step] });
    const client = clientFor(providerCase, server);
    const deltas: ModelDelta[] = [];
    const streamed = await client.generate(
      request({ stream: true, tools: [readFileTool], onDelta: (delta) => deltas.push(delta) }),
    );
    const whole = await client.generate(request({ tools: [readFileTool] }));
    expect(textOf(deltas)).toBe(text);
    expect(deltas.filter((delta) => delta.type === "tool_call")).toEqual([
      { type: "tool_call", id: "call_a", name: "read_file" },
    ]);
    // Text deltas arrive in pieces, before the call that follows them.
    expect(deltas.filter((delta) => delta.type === "text").length).toBeGreaterThan(1);
    expect(deltas.findIndex((delta) => delta.type === "tool_call")).toBe(deltas.length - 1);
    for (const key of ["text", "reasoning", "usage", "finishReason"] as const) {
      expect(streamed[key]).toEqual(whole[key]);
    }
    // Provider item ids differ between the two answers; the calls themselves do not.
    const calls = (response: typeof whole) =>
      response.toolCalls.map(({ providerMetadata: _item, ...call }) => call);
    expect(calls(streamed)).toEqual(calls(whole));
    expect(streamed.rawResponse).toMatchObject({ stream: true });
    expect((streamed.rawResponse as { chunks: unknown[] }).chunks.length).toBeGreaterThan(3);
  });

  it("a stream cut mid-way is a network failure that keeps what had arrived", async () => {
    const deltas: ModelDelta[] = [];
    let release: () => void = () => {};
    const received = new Promise<void>((resolve) => {
      release = resolve;
    });
    server = await startScriptedProviderServer({
      script: [
        {
          kind: "text",
          text,
          stream: { chunkSize: 5, cutAfterChunks: framesBeforeText[providerCase.wire] + 2 },
        },
      ],
      beforeCut: () => received,
    });
    const error = await rejection(
      clientFor(providerCase, server).generate(
        request({
          stream: true,
          onDelta: (delta) => {
            deltas.push(delta);
            if (textOf(deltas) === "Hello ther") release();
          },
        }),
      ),
    );
    expect(error.errorClass).toBe("network");
    expect(error.isRetryable).toBe(true);
    expect(error.partialResponse?.text).toBe("Hello ther");
    expect(error.partialResponse?.toolCalls).toEqual([]);
    expect(error.partialResponse?.finishReason).toBe("interrupted");
    const chunks = (error.partialResponse?.rawResponse as { chunks: unknown[] } | undefined)?.chunks;
    expect(chunks).toHaveLength(framesBeforeText[providerCase.wire] + 2);
  });

  it.each(midStreamErrors[providerCase.wire])(
    "an error reported mid-stream (%j) is classified and keeps the text before it",
    async (errorFrame, errorClass) => {
      server = await startScriptedProviderServer({
        script: [
          {
            kind: "text",
            text,
            stream: { chunkSize: 5, errorAfterChunks: framesBeforeText[providerCase.wire] + 2, errorFrame },
          },
        ],
      });
      const deltas: ModelDelta[] = [];
      const error = await rejection(
        clientFor(providerCase, server).generate(
          request({ stream: true, onDelta: (delta) => deltas.push(delta) }),
        ),
      );
      expect(error.errorClass).toBe(errorClass);
      expect(error.partialResponse?.text).toBe("Hello ther");
      expect(textOf(deltas)).toBe("Hello ther");
    },
  );

  it("the caller's abort mid-stream is aborted and keeps what had arrived", async () => {
    const controller = new AbortController();
    let release: () => void = () => {};
    const aborted = new Promise<void>((resolve) => {
      release = resolve;
    });
    server = await startScriptedProviderServer({
      script: [
        {
          kind: "text",
          text,
          stream: { chunkSize: 5, cutAfterChunks: framesBeforeText[providerCase.wire] + 1 },
        },
      ],
      beforeCut: () => aborted,
    });
    const error = await rejection(
      clientFor(providerCase, server).generate(
        request({
          stream: true,
          abortSignal: controller.signal,
          onDelta: () => {
            controller.abort();
            release();
          },
        }),
      ),
    );
    expect(error.errorClass).toBe("aborted");
    expect(error.partialResponse?.text).toBe("Hello");
  });

  it("a listener that throws does not fail the attempt", async () => {
    server = await startScriptedProviderServer({ script: [{ kind: "text", text }] });
    const response = await clientFor(providerCase, server).generate(
      request({
        stream: true,
        onDelta: () => {
          throw new Error("display failed");
        },
      }),
    );
    expect(response.text).toBe(text);
  });
});

describe("streaming: a stalled stream", () => {
  it("is a timeout once the client's time is up, and keeps what had arrived", async () => {
    const providerCase = providerCases.find((candidate) => candidate.type === "google")!;
    let release: () => void = () => {};
    const stalled = new Promise<void>((resolve) => {
      release = resolve;
    });
    server = await startScriptedProviderServer({
      script: [{ kind: "text", text, stream: { chunkSize: 5, cutAfterChunks: 2 } }],
      // The server holds the stream open, without another chunk, until the client has given up.
      beforeCut: () => stalled,
    });
    const error = await rejection(
      clientFor(providerCase, server, { timeoutMs: 400 }).generate(request({ stream: true })),
    ).finally(release);
    expect(error.errorClass).toBe("timeout");
    expect(error.partialResponse?.text).toBe("Hello ther");
  });
});

describe("streaming: partial tool calls", () => {
  it("keeps a call whose arguments were complete before the cut and drops the unfinished one", async () => {
    const providerCase = providerCases.find((candidate) => candidate.label === "anthropic")!;
    let release: () => void = () => {};
    const received = new Promise<void>((resolve) => {
      release = resolve;
    });
    // message_start, then the first tool_use block (start, 2 deltas, stop), then the second block's start
    // and one delta: the second call's arguments never complete.
    server = await startScriptedProviderServer({
      script: [
        {
          kind: "tool_calls",
          calls: [
            { id: "toolu_1", name: "read_file", arguments: { path: "/a" } },
            { id: "toolu_2", name: "read_file", arguments: { path: "/b" } },
          ],
          stream: { chunkSize: 8, cutAfterChunks: 7 },
        },
      ],
      beforeCut: () => received,
    });
    const error = await rejection(
      clientFor(providerCase, server).generate(
        request({
          stream: true,
          tools: [readFileTool],
          onDelta: (delta) => {
            if (delta.type === "tool_call" && delta.id === "toolu_2") release();
          },
        }),
      ),
    );
    expect(error.errorClass).toBe("network");
    expect(error.partialResponse?.toolCalls).toEqual([
      { id: "toolu_1", name: "read_file", argumentsText: '{"path":"/a"}' },
    ]);
  });
});
