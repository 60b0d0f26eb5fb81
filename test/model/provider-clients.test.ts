import { afterEach, describe, expect, it } from "vitest";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import type { ModelUsage } from "../../src/model/model-client.js";
import { createModelClient } from "../../src/model/providers/create-model-client.js";
import {
  type ScriptedProviderServer,
  startScriptedProviderServer,
} from "../../src/testing/scripted-provider-server.js";
import { clientFor, providerCases, readFileTool, request } from "./provider-fixtures.js";

let server: ScriptedProviderServer | null = null;

afterEach(async () => {
  await server?.close();
  server = null;
});

const fullUsage = {
  prompt_tokens: 100,
  completion_tokens: 30,
  prompt_tokens_details: { cached_tokens: 60, cache_write_tokens: 10 },
  completion_tokens_details: { reasoning_tokens: 20 },
};

/** What each provider's wire format can report of the usage above. */
const reportedUsage: Readonly<Record<string, ModelUsage>> = {
  "openai (chat)": {
    inputTokens: 100,
    outputTokens: 30,
    reasoningTokens: 20,
    cacheReadTokens: 60,
    cacheWriteTokens: 10,
  },
  "openai (responses)": { inputTokens: 100, outputTokens: 30, reasoningTokens: 20, cacheReadTokens: 60 },
  "openai-compatible": { inputTokens: 100, outputTokens: 30, reasoningTokens: 20, cacheReadTokens: 60 },
  // Anthropic reports cached reads and writes apart; every input token is counted once.
  anthropic: { inputTokens: 100, outputTokens: 30, cacheReadTokens: 60, cacheWriteTokens: 10 },
  google: { inputTokens: 100, outputTokens: 30, reasoningTokens: 20, cacheReadTokens: 60 },
  ollama: { inputTokens: 100, outputTokens: 30 },
  openrouter: {
    inputTokens: 100,
    outputTokens: 30,
    reasoningTokens: 20,
    cacheReadTokens: 60,
    cacheWriteTokens: 10,
  },
};

/** The header each provider's API key travels in, and how. */
const keyHeaders: Readonly<Record<string, readonly [string, string]>> = {
  "openai (chat)": ["authorization", "Bearer sk-test-key"],
  "openai (responses)": ["authorization", "Bearer sk-test-key"],
  "openai-compatible": ["authorization", "Bearer sk-test-key"],
  anthropic: ["x-api-key", "sk-test-key"],
  google: ["x-goog-api-key", "sk-test-key"],
  ollama: ["authorization", "Bearer sk-test-key"],
  openrouter: ["authorization", "Bearer sk-test-key"],
};

describe.each(providerCases)("model client: $label", (providerCase) => {
  describe.each([false, true])("stream: %s", (stream) => {
    it("returns text and usage with the same meaning whatever the provider", async () => {
      server = await startScriptedProviderServer({
        script: [{ kind: "text", text: "Hello there", usage: fullUsage }],
      });
      const client = clientFor(providerCase, server);
      const response = await client.generate(request({ stream }));
      expect(client.provider).toBe("scripted");
      expect(client.model).toBe(providerCase.model);
      expect(response.text).toBe("Hello there");
      expect(response.toolCalls).toEqual([]);
      expect(response.usage).toEqual(reportedUsage[providerCase.label]);
      expect(response.finishReason).toBe("stop");
    });

    it("reports tool calls with their argument text unparsed and the unified finish reasons", async () => {
      server = await startScriptedProviderServer({
        script: [
          { kind: "tool_calls", calls: [{ id: "call_1", name: "read_file", arguments: { path: "/a" } }] },
          { kind: "text", text: "truncated", finishReason: "length" },
        ],
      });
      const client = clientFor(providerCase, server);
      const calls = await client.generate(request({ stream, tools: [readFileTool] }));
      expect(calls.toolCalls).toMatchObject([
        { id: "call_1", name: "read_file", argumentsText: '{"path":"/a"}' },
      ]);
      expect(calls.finishReason).toBe("tool-calls");
      expect((await client.generate(request({ stream }))).finishReason).toBe("length");
    });

    it("gives calls the provider sent without an id ids that are the same on every run", async () => {
      const script = [
        {
          kind: "tool_calls",
          calls: [
            { name: "read_file", arguments: { path: "/a" } },
            { name: "read_file", arguments: { path: "/b" } },
          ],
        },
        { kind: "tool_calls", calls: [{ name: "read_file", arguments: { path: "/c" } }] },
      ] as const;
      const ids: string[][] = [];
      for (let run = 0; run < 2; run++) {
        server = await startScriptedProviderServer({ script });
        const client = clientFor(providerCase, server);
        const first = await client.generate(request({ stream, tools: [readFileTool] }));
        const second = await client.generate(request({ stream, tools: [readFileTool] }));
        ids.push([...first.toolCalls, ...second.toolCalls].map((call) => call.id));
        await server.close();
        server = null;
      }
      expect(ids[1]).toEqual(ids[0]);
      expect(new Set(ids[0]).size).toBe(3);
      for (const id of ids[0]!) expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
    });

    it("sends the API key and configured headers in headers, never in the recorded request body", async () => {
      server = await startScriptedProviderServer({ script: [{ kind: "text", text: "ok" }] });
      const client = createModelClient(
        {
          provider: "scripted",
          model: providerCase.model,
          connection: {
            type: providerCase.type,
            ...(providerCase.mode === undefined ? {} : { mode: providerCase.mode }),
            baseUrl: server.baseUrls[providerCase.wire],
            apiKey: "sk-test-key",
            headers: { "x-team": "charter" },
          },
        },
        { environment: deterministicEnvironment() },
      );
      const response = await client.generate(request({ stream }));
      const [header, value] = keyHeaders[providerCase.label]!;
      expect(server.requests[0]?.headers[header]).toBe(value);
      expect(server.requests[0]?.headers["x-team"]).toBe("charter");
      expect(JSON.stringify(response.rawRequest)).not.toContain("sk-test-key");
      expect(JSON.stringify(response.rawResponse)).not.toContain("sk-test-key");
    });
  });
});

describe("API keys come from the configuration only", () => {
  it.each(providerCases.filter((providerCase) => providerCase.type !== "openai-compatible"))(
    "$label: no configured key sends none, even with the provider's variable in the environment",
    async (providerCase) => {
      const variables = [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GOOGLE_GENERATIVE_AI_API_KEY",
        "OPENROUTER_API_KEY",
      ];
      const saved = variables.map((name) => [name, process.env[name]] as const);
      for (const name of variables) process.env[name] = "sk-from-the-environment";
      try {
        server = await startScriptedProviderServer({ script: [{ kind: "text", text: "ok" }] });
        await clientFor(providerCase, server, { apiKey: null }).generate(request());
        expect(JSON.stringify(server.requests[0]?.headers)).not.toContain("sk-from-the-environment");
      } finally {
        for (const [name, value] of saved) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      }
    },
  );
});
