import type { ContractSettings, ModelParameterSettings } from "../../src/contract/contract-factory-input.js";
import { deterministicEnvironment, type RuntimeEnvironment } from "../../src/foundation/environment.js";
import { createModelClient } from "../../src/model/providers/create-model-client.js";
import { runPreparedAgent } from "../../src/runner/run-prepared-agent.js";
import type { CharterEvent } from "../../src/session/charter-event.js";
import type { PreflightProblem } from "../../src/session/session-event.js";
import { type RecordedRequest, startScriptedOpenAIServer } from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { defineFunctionTool } from "../../src/tools/define-function-tool.js";
import type { RegisteredTool } from "../../src/tools/tool-definition.js";
import { createInMemoryTranscriptWriter } from "../../src/transcript/in-memory-transcript-writer.js";
import { verifyEntries } from "../../src/transcript/verify-transcript.js";

/** In-process function tools with observable side effects: every execution is recorded in `executions`. */
export function recordingTools(executions: string[]): RegisteredTool[] {
  return [
    defineFunctionTool({
      name: "lookup",
      description: "Looks a key up.",
      inputSchema: {
        type: "object",
        properties: { key: { type: "string" } },
        required: ["key"],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true },
      async execute(input) {
        executions.push(`lookup:${String(input.key)}`);
        return `value of ${String(input.key)}`;
      },
    }),
    defineFunctionTool({
      name: "write_file",
      description: "Writes a file.",
      inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      async execute(input) {
        executions.push(`write_file:${String(input.path)}`);
        return "written";
      },
    }),
    defineFunctionTool({
      name: "big",
      description: "Returns a large output.",
      inputSchema: { type: "object", properties: { lines: { type: "integer" } }, required: ["lines"] },
      async execute(input) {
        executions.push("big");
        return Array.from(
          { length: Number(input.lines) },
          (_, index) => `row ${index} ${"x".repeat(60)}`,
        ).join("\n");
      },
    }),
    defineFunctionTool({
      name: "hang",
      description: "Never answers until aborted.",
      inputSchema: { type: "object", properties: {} },
      async execute(_input, context) {
        executions.push("hang");
        await new Promise((resolve) => context.signal.addEventListener("abort", resolve, { once: true }));
        return "aborted";
      },
    }),
  ];
}

/** What Charter put on the wire for one model request, read from the OpenAI chat completions body. */
export interface SentModelRequest {
  /** The model name the request was sent for: which target's client made it. */
  readonly model: string;
  /** The text of the last message (a tool reply, or the notice Charter appends for a retry). */
  readonly lastMessage: string;
  /** The names of the tools offered, in the order sent. */
  readonly toolNames: readonly string[];
  readonly toolChoice: unknown;
}

interface ChatCompletionsBody {
  readonly model: string;
  readonly messages: readonly { readonly content?: unknown }[];
  readonly tools?: readonly { readonly function: { readonly name: string } }[];
  readonly tool_choice?: unknown;
}

function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part: { text?: string }) => part.text ?? "").join("");
  return "";
}

export function sentModelRequest(recorded: RecordedRequest): SentModelRequest {
  const body = recorded.body as ChatCompletionsBody;
  return {
    model: body.model,
    lastMessage: messageText(body.messages.at(-1)?.content),
    toolNames: (body.tools ?? []).map((tool) => tool.function.name),
    toolChoice: body.tool_choice,
  };
}

/** Charter's OpenAI-compatible client (the one `charter run` builds) for `scripted/<model>` at `baseUrl`. */
export function openAICompatibleClient(baseUrl: string, model: string, environment: RuntimeEnvironment) {
  return createModelClient(
    {
      provider: "scripted",
      model,
      connection: { type: "openai-compatible", baseUrl, apiKey: null, headers: {} },
    },
    { environment },
  );
}

export interface ScriptedRunOptions {
  readonly script?: readonly ScriptedStep[];
  /** A dynamic script, answering from what Charter sent on the wire. */
  readonly respond?: (request: SentModelRequest, index: number) => ScriptedStep | Promise<ScriptedStep>;
  readonly settings?: ContractSettings;
  /** How many model targets; target i is model `m<i>`, reached through its own client. */
  readonly targets?: number;
  /** Per-target settings from the configuration (`providers.<p>.models.<m>`), by target index. */
  readonly targetParameters?: readonly ModelParameterSettings[];
  readonly contextWindow?: number;
  /** Default: the in-process `recordingTools`. */
  readonly tools?: readonly RegisteredTool[];
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: CharterEvent) => void;
  readonly preflight?: () => Promise<readonly PreflightProblem[]>;
  readonly prompt?: string;
}

/**
 * Runs a session with every model call going over real HTTP on loopback: the scripted OpenAI-compatible server
 * answers from the script, and each target is Charter's own OpenAI-compatible client (the one `charter run`
 * builds), with its own model name, so the server sees which target each attempt reached. The transcript is
 * kept in memory and verified afterwards; the clock and ids are deterministic. Strict like a scripted model: a
 * model call after the script ended fails the test.
 */
export async function runScripted(options: ScriptedRunOptions) {
  const environment = deterministicEnvironment();
  const respond = options.respond;
  const server = await startScriptedOpenAIServer(
    respond === undefined
      ? { script: options.script ?? [] }
      : { respond: (recorded, index) => respond(sentModelRequest(recorded), index) },
  );
  try {
    const targets = Array.from({ length: options.targets ?? 1 }, (_, index) => ({
      provider: "scripted",
      model: `m${index}`,
      contextWindow: options.contextWindow ?? 100_000,
      ...(options.targetParameters?.[index] ? { parameters: options.targetParameters[index] } : {}),
    }));
    const models = targets.map((target) => openAICompatibleClient(server.baseUrl, target.model, environment));
    const writer = createInMemoryTranscriptWriter();
    const executions: string[] = [];
    const { result, contract, state } = await runPreparedAgent({
      agent: { id: "test-agent", systemPrompt: "You are a test agent.", settings: options.settings ?? {} },
      prompt: options.prompt ?? "Do the task.",
      targets,
      models,
      tools: options.tools ?? recordingTools(executions),
      environment,
      transcriptWriter: writer,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
      ...(options.preflight ? { preflight: options.preflight } : {}),
    });
    const modelRequests = server.requests.filter((request) => request.completionIndex !== null);
    if (modelRequests.some((request) => request.scriptExhausted))
      throw new Error(`the model was called after its ${options.script?.length ?? 0}-step script ended`);
    const verification = verifyEntries(writer.header!, writer.contract, writer.entries, writer.raw);
    return {
      result,
      contract,
      state,
      writer,
      /** Every model request, in arrival order, as the server received it. */
      requests: modelRequests.map(sentModelRequest),
      /** Script steps no request consumed (0 with `respond`). */
      unusedSteps: server.remaining(),
      executions,
      verification,
      environment,
    };
  } finally {
    await server.close();
  }
}

export const call = (name: string, args: Record<string, unknown> | string, id?: string) => ({
  name,
  arguments: args,
  ...(id ? { id } : {}),
});

export const report = (content: string) => call("final_report", { format: "markdown", content });
