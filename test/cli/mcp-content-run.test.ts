import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { replayRunDirectory } from "../../src/runner/replay-run-directory.js";
import { runAgent } from "../../src/runner/run-agent.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import {
  type RecordedRequest,
  type ScriptedProviderServer,
  startScriptedProviderServer,
} from "../../src/testing/scripted-provider-server.js";
import { verifyRunDirectory } from "../../src/transcript/verify-transcript.js";
import { mcpTestServerPath } from "./cli-harness.js";

// What the MCP test server's `snapshot` tool returns (a 1x1 PNG) and `recording` (a WAV header).
const png =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const wav = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

let model: ScriptedProviderServer | null = null;
afterEach(async () => {
  await model?.close();
  model = null;
});

const report = (content: string): ScriptedStep => ({
  kind: "tool_calls",
  calls: [{ name: "final_report", arguments: { format: "markdown", content } }],
});

/** The model calls `tool` on its first turn and reports on the next. */
function callThenReport(tool: string, args: Record<string, unknown>) {
  return (_request: RecordedRequest, index: number): ScriptedStep =>
    index === 0 ? { kind: "tool_calls", calls: [{ name: tool, arguments: args }] } : report("seen");
}

async function project(provider: Record<string, unknown>, frontmatter = "tools: [test]") {
  const directory = await mkdtemp(join(tmpdir(), "charter-mcp-content-"));
  await writeFile(
    join(directory, "agent.md"),
    `---\nmodels: [scripted/m]\n${frontmatter}\n---\nYou use tools.\n`,
  );
  await writeFile(
    join(directory, ".charter.json"),
    JSON.stringify({
      providers: { scripted: { apiKey: "sk-test", models: { m: { contextWindow: 32000 } }, ...provider } },
      mcpServers: { test: { command: process.execPath, args: [mcpTestServerPath] } },
    }),
  );
  return directory;
}

async function run(directory: string, prompt: string) {
  return runAgent({
    agentPath: join(directory, "agent.md"),
    prompt,
    cwd: directory,
    runsDirectory: join(directory, "runs"),
  });
}

/** The run directory's transcript and its raw payloads, as text. */
async function runFiles(directory: string) {
  const runs = join(directory, "runs");
  const [runId] = await readdir(runs);
  const transcript = await readFile(join(runs, runId!, "transcript.jsonl"), "utf8");
  const rawDirectory = join(runs, runId!, "raw");
  const raw = await Promise.all(
    (await readdir(rawDirectory)).map(async (name) =>
      JSON.parse(await readFile(join(rawDirectory, name), "utf8")),
    ),
  );
  return { transcript, raw };
}

describe("images and audio from an MCP tool", () => {
  it("reach an OpenAI Responses model as an input_image, with the bytes kept once in the raw payloads", async () => {
    model = await startScriptedProviderServer({
      respond: callThenReport("test__snapshot", { caption: "a dot" }),
    });
    const directory = await project({
      type: "openai",
      mode: "responses",
      baseUrl: model.baseUrls["openai-responses"],
    });
    const result = await run(directory, "Look at the snapshot.");
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");

    const input = (model.requests[1]!.body as { input: Record<string, unknown>[] }).input;
    const output = input.find((item) => item.type === "function_call_output")?.output;
    expect(output).toEqual([
      { type: "input_text", text: 'a dot\n{"type":"image","mimeType":"image/png","bytes":70}' },
      { type: "input_image", image_url: `data:image/png;base64,${png}` },
    ]);

    // The conversation names the image by the hash of a raw payload that holds its bytes.
    const toolMessage = result.conversation.find((message) => message.role === "tool")!;
    expect(toolMessage.attachments).toEqual([
      {
        type: "image",
        media_type: "image/png",
        bytes: 70,
        payload_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    ]);
    const { transcript, raw } = await runFiles(directory);
    expect(transcript).toContain(toolMessage.attachments![0]!.payload_hash);
    expect(transcript).not.toContain(png);
    expect(raw).toContainEqual({ type: "image", media_type: "image/png", data: png });

    // The record verifies offline, raw payloads included.
    expect((await verifyRunDirectory(join(directory, "runs", result.runId))).ok).toBe(true);
  });

  it("reach a chat-completions model as their text description only", async () => {
    model = await startScriptedProviderServer({ respond: callThenReport("test__recording", {}) });
    const directory = await project({ type: "openai-compatible", baseUrl: model.baseUrls["openai-chat"] });
    const result = await run(directory, "Listen to the recording.");
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
    const messages = (model.requests[1]!.body as { messages: { role: string; content: unknown }[] }).messages;
    expect(messages.find((message) => message.role === "tool")?.content).toBe(
      '{"type":"audio","mimeType":"audio/wav","bytes":44}',
    );
    expect(model.requests[1]!.bodyText).not.toContain(wav);
    const { raw } = await runFiles(directory);
    expect(raw).toContainEqual({ type: "audio", media_type: "audio/wav", data: wav });
    // The attachment is in the conversation by hash: an offline replay reproduces the chain from the record alone.
    expect(result.conversation.find((message) => message.role === "tool")?.attachments).toHaveLength(1);
    const replay = await replayRunDirectory(join(directory, "runs", result.runId));
    expect(replay).toMatchObject({ ok: true, headHash: result.transcript.headHash, divergence: null });
  });
});

describe("binary resources from an MCP tool", () => {
  it("are stored behind a tool_output handle that the model can read", async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 251, 252, 253, 254, 255, 7]);
    model = await startScriptedProviderServer({
      respond: (request, index) => {
        if (index === 0) {
          return {
            kind: "tool_calls",
            calls: [
              {
                name: "test__blob_resource",
                arguments: { base64: bytes.toString("base64"), mimeType: "application/octet-stream" },
              },
            ],
          };
        }
        const messages = (request.body as { messages: { role: string; content: string }[] }).messages;
        const replies = messages.filter((message) => message.role === "tool");
        if (index === 1) {
          const handle = JSON.parse(replies[0]!.content).handle as string;
          return {
            kind: "tool_calls",
            calls: [{ name: "tool_output", arguments: { handle, mode: "read" } }],
          };
        }
        return report(replies[1]!.content);
      },
    });
    const directory = await project({ type: "openai-compatible", baseUrl: model.baseUrls["openai-chat"] });
    const result = await run(directory, "Fetch the blob.");
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
    const first = (
      model.requests[1]!.body as { messages: { role: string; content: string }[] }
    ).messages.find((message) => message.role === "tool");
    expect(JSON.parse(first!.content)).toEqual({
      type: "resource",
      uri: "test://blob/1",
      mimeType: "application/octet-stream",
      bytes: 10,
      handle: "out-1",
      encoding: "base64",
      hint: "call tool_output with this handle to read it",
    });
    // Reading the handle gives the bytes back, as base64.
    expect(result.finalReport?.content).toContain(bytes.toString("base64"));
  });

  it("of a textual media type are stored as their text", async () => {
    model = await startScriptedProviderServer({
      respond: (request, index) => {
        if (index === 0) {
          return {
            kind: "tool_calls",
            calls: [
              {
                name: "test__blob_resource",
                arguments: { base64: Buffer.from("alpha\nbeta\n").toString("base64"), mimeType: "text/csv" },
              },
            ],
          };
        }
        const messages = (request.body as { messages: { role: string; content: string }[] }).messages;
        const replies = messages.filter((message) => message.role === "tool");
        if (index === 1) {
          const handle = JSON.parse(replies[0]!.content).handle as string;
          return {
            kind: "tool_calls",
            calls: [{ name: "tool_output", arguments: { handle, mode: "grep", pattern: "beta" } }],
          };
        }
        return report(replies[1]!.content);
      },
    });
    const directory = await project({ type: "openai-compatible", baseUrl: model.baseUrls["openai-chat"] });
    const result = await run(directory, "Fetch the CSV.");
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(result.finalReport?.content).toContain("2: beta");
  });
});
