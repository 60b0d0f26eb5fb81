import { afterEach, describe, expect, it } from "vitest";
import {
  type AgentMessage,
  systemMessage,
  toolMessage,
  userMessage,
} from "../../src/contract/agent-message.js";
import { ADAPTER_VERSION, adaptProtocol } from "../../src/model/protocol-adapter.js";
import {
  type ScriptedProviderServer,
  startScriptedProviderServer,
} from "../../src/testing/scripted-provider-server.js";
import { clientFor, type ProviderCase, providerCases, readFileTool, request } from "./provider-fixtures.js";

let server: ScriptedProviderServer | null = null;

afterEach(async () => {
  await server?.close();
  server = null;
});

type Body = Record<string, unknown> & {
  messages?: Record<string, unknown>[];
  contents?: { role: string; parts: Record<string, unknown>[] }[];
  input?: Record<string, unknown>[];
};

/** What each provider must get back in the next request for the reasoning it produced to stay valid. */
const sentBack: Readonly<Record<string, (body: Body) => void>> = {
  "openai (chat)": () => {
    // OpenAI's Chat Completions API returns no reasoning, so there is nothing to send back.
  },
  "openai (responses)": (body) => {
    expect(body.input).toContainEqual({
      type: "reasoning",
      id: "rs_1",
      encrypted_content: "opaque-reasoning",
      summary: [{ type: "summary_text", text: "The file holds the answer." }],
    });
    expect(body.input).toContainEqual(
      expect.objectContaining({ type: "function_call", call_id: "call_read", name: "read_file" }),
    );
  },
  "openai-compatible": (body) => {
    expect(body.messages?.[2]).toMatchObject({
      role: "assistant",
      reasoning_content: "The file holds the answer.",
    });
  },
  anthropic: (body) => {
    const assistant = body.messages?.find((message) => message.role === "assistant") as
      | { content: Record<string, unknown>[] }
      | undefined;
    expect(assistant?.content[0]).toEqual({
      type: "thinking",
      thinking: "The file holds the answer.",
      signature: "opaque-reasoning",
    });
    expect(assistant?.content[1]).toMatchObject({ type: "tool_use", id: "call_read", name: "read_file" });
  },
  google: (body) => {
    const model = body.contents?.find((content) => content.role === "model");
    expect(model?.parts).toContainEqual(
      expect.objectContaining({
        functionCall: expect.objectContaining({ name: "read_file" }),
        thoughtSignature: "opaque-reasoning",
      }),
    );
  },
  ollama: (body) => {
    expect(body.messages?.[2]).toMatchObject({ role: "assistant", thinking: "The file holds the answer." });
  },
  openrouter: (body) => {
    expect(body.messages?.[2]).toMatchObject({
      role: "assistant",
      reasoning_details: [
        expect.objectContaining({ text: "The file holds the answer.", signature: "opaque-reasoning" }),
      ],
    });
  },
};

async function roundTrip(
  providerCase: ProviderCase,
  stream: boolean,
): Promise<{ message: AgentMessage; body: Body }> {
  server = await startScriptedProviderServer({
    script: [
      {
        kind: "tool_calls",
        reasoning: "The file holds the answer.",
        reasoningSignature: "opaque-reasoning",
        calls: [{ id: "call_read", name: "read_file", arguments: { path: "/answer" } }],
      },
      { kind: "text", text: "42" },
    ],
  });
  const client = clientFor(providerCase, server);
  const first = await client.generate(request({ stream, tools: [readFileTool] }));
  const adapted = adaptProtocol(first, {
    strict: true,
    sourceModel: `scripted/${providerCase.model}`,
    adapterVersion: ADAPTER_VERSION,
    rawHash: "h",
  });
  // The conversation as the transcript stores it: plain JSON, read back.
  const message = JSON.parse(JSON.stringify(adapted.canonical_message)) as AgentMessage;
  await client.generate(
    request({
      stream,
      tools: [readFileTool],
      messages: [
        systemMessage("s"),
        userMessage("What is the answer?"),
        message,
        toolMessage("call_read", "read_file", "42"),
      ],
    }),
  );
  return { message, body: server.requests[1]?.body as Body };
}

describe.each(providerCases)("reasoning kept in the conversation: $label", (providerCase) => {
  it.each([false, true])(
    "stream %s: the next request hands the provider back what it needs",
    async (stream) => {
      const { message, body } = await roundTrip(providerCase, stream);
      expect(message.tool_calls.map((call) => call.id)).toEqual(["call_read"]);
      sentBack[providerCase.label]!(body);
    },
  );
});

describe("reasoning blocks in the canonical message", () => {
  it("keeps Anthropic's signature on its block, the joined text in reasoning", async () => {
    const anthropic = providerCases.find((providerCase) => providerCase.type === "anthropic")!;
    const { message } = await roundTrip(anthropic, false);
    expect(message.reasoning).toBe("The file holds the answer.");
    expect(message.reasoning_blocks).toEqual([
      {
        provider_metadata: { anthropic: { signature: "opaque-reasoning" } },
        text: "The file holds the answer.",
      },
    ]);
  });

  it("keeps Gemini's thought signature on the call it came with", async () => {
    const google = providerCases.find((providerCase) => providerCase.type === "google")!;
    const { message } = await roundTrip(google, true);
    expect(message.tool_calls[0]?.raw_payload).toEqual({
      arguments_text: '{"path":"/answer"}',
      provider_metadata: { google: { thoughtSignature: "opaque-reasoning" } },
    });
  });

  it("adds nothing for a provider that attaches no metadata", async () => {
    const compatible = providerCases.find((providerCase) => providerCase.type === "openai-compatible")!;
    const { message } = await roundTrip(compatible, false);
    expect(message).not.toHaveProperty("reasoning_blocks");
    expect(message).not.toHaveProperty("provider_metadata");
    expect(message.tool_calls[0]?.raw_payload).toEqual({ arguments_text: '{"path":"/answer"}' });
  });
});
