import { afterEach, describe, expect, it } from "vitest";
import {
  type AgentMessage,
  type ContentAttachment,
  systemMessage,
  toolMessage,
  userMessage,
} from "../../src/contract/agent-message.js";
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

// Distinctive base64 so that its presence in a request body is unambiguous.
const imageData =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const audioData = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";
const image: ContentAttachment = {
  type: "image",
  media_type: "image/png",
  bytes: 68,
  payload_hash: "h-image",
};
const audio: ContentAttachment = {
  type: "audio",
  media_type: "audio/wav",
  bytes: 44,
  payload_hash: "h-audio",
};
const description =
  'a chart\n{"type":"image","mimeType":"image/png","bytes":68}\n{"type":"audio","mimeType":"audio/wav","bytes":44}';

function conversation(): AgentMessage[] {
  return [
    systemMessage("You are terse."),
    userMessage("Show me the chart."),
    {
      role: "assistant",
      content: "",
      tool_calls: [
        {
          id: "call_1",
          name: "read_file",
          arguments: { path: "/chart" },
          source_model: "s/m",
          raw_payload: null,
        },
      ],
    },
    toolMessage("call_1", "read_file", description, [image, audio]),
  ];
}

const bytesByHash = new Map([
  ["h-image", imageData],
  ["h-audio", audioData],
]);

/** Which attachments reach each provider as content, not as text. */
const accepted: Readonly<Record<string, { image: boolean; audio: boolean }>> = {
  "openai (chat)": { image: false, audio: false },
  "openai (responses)": { image: true, audio: false },
  "openai-compatible": { image: false, audio: false },
  anthropic: { image: true, audio: false },
  google: { image: true, audio: true },
  ollama: { image: false, audio: false },
  openrouter: { image: false, audio: false },
};

describe.each(providerCases)("tool-result attachments: $label", (providerCase) => {
  it("sends the images and audio the provider accepts, and the text description always", async () => {
    server = await startScriptedProviderServer({ script: [{ kind: "text", text: "ok" }] });
    const client = clientFor(providerCase, server);
    await client.generate(
      request({
        messages: conversation(),
        tools: [readFileTool],
        attachmentData: (hash) => bytesByHash.get(hash),
      }),
    );
    const body = server.requests[0]!.bodyText;
    const expected = accepted[providerCase.label]!;
    expect(body.includes(imageData)).toBe(expected.image);
    expect(body.includes(audioData)).toBe(expected.audio);
    expect(body).toContain("a chart");
  });

  it("sends only the text when the bytes are not at hand", async () => {
    server = await startScriptedProviderServer({ script: [{ kind: "text", text: "ok" }] });
    const client = clientFor(providerCase, server);
    await client.generate(
      request({ messages: conversation(), tools: [readFileTool], attachmentData: () => undefined }),
    );
    const body = server.requests[0]!.bodyText;
    expect(body).not.toContain(imageData);
    expect(body).toContain("a chart");
  });
});

describe("where the image goes in each accepting provider's request", () => {
  it("OpenAI responses: an input_image in the function call's output", async () => {
    server = await startScriptedProviderServer({ script: [{ kind: "text", text: "ok" }] });
    const client = clientFor(providerCases.find((entry) => entry.label === "openai (responses)")!, server);
    await client.generate(
      request({
        messages: conversation(),
        tools: [readFileTool],
        attachmentData: (hash) => bytesByHash.get(hash),
      }),
    );
    const input = (server.requests[0]!.body as { input: Record<string, unknown>[] }).input;
    const output = input.find((item) => item.type === "function_call_output")?.output;
    expect(output).toEqual([
      { type: "input_text", text: description },
      { type: "input_image", image_url: `data:image/png;base64,${imageData}` },
    ]);
  });

  it("Anthropic: an image block inside the tool_result", async () => {
    server = await startScriptedProviderServer({ script: [{ kind: "text", text: "ok" }] });
    const client = clientFor(providerCases.find((entry) => entry.label === "anthropic")!, server);
    await client.generate(
      request({
        messages: conversation(),
        tools: [readFileTool],
        attachmentData: (hash) => bytesByHash.get(hash),
      }),
    );
    const messages = (server.requests[0]!.body as { messages: { content: Record<string, unknown>[] }[] })
      .messages;
    const result = messages.flatMap((message) => message.content).find((part) => part.type === "tool_result");
    expect(result?.content).toEqual([
      { type: "text", text: description },
      { type: "image", source: { type: "base64", media_type: "image/png", data: imageData } },
    ]);
  });
});
