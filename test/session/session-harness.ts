import type { ContractSettings } from "../../src/contract/contract-factory-input.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import type { ModelRequest } from "../../src/model/model-client.js";
import { runPreparedAgent } from "../../src/runner/run-prepared-agent.js";
import type { PreflightProblem } from "../../src/session/session-event.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import {
  createStrictScriptedModel,
  type StrictScriptedModel,
} from "../../src/testing/strict-scripted-model.js";
import { defineFunctionTool } from "../../src/tools/define-function-tool.js";
import type { RegisteredTool } from "../../src/tools/tool-definition.js";
import { createInMemoryTranscriptWriter } from "../../src/transcript/in-memory-transcript-writer.js";
import { verifyEntries } from "../../src/transcript/verify-transcript.js";

/** Tools with observable side effects: every execution is recorded in `executions`. */
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

export interface ScriptedRunOptions {
  readonly script?: readonly ScriptedStep[];
  readonly respond?: (request: ModelRequest, index: number) => ScriptedStep | Promise<ScriptedStep>;
  readonly settings?: ContractSettings;
  readonly targets?: number;
  readonly contextWindow?: number;
  readonly tools?: readonly RegisteredTool[];
  readonly signal?: AbortSignal;
  readonly preflight?: () => Promise<readonly PreflightProblem[]>;
  readonly prompt?: string;
}

/**
 * Runs a session in process against the strict scripted model (which fails on unexpected calls), with an
 * in-memory transcript, a deterministic clock and ids, and verifies the transcript afterwards.
 */
export async function runScripted(options: ScriptedRunOptions) {
  const environment = deterministicEnvironment();
  const targetCount = options.targets ?? 1;
  const models: StrictScriptedModel[] = [];
  const shared = createStrictScriptedModel({
    provider: "scripted",
    model: "m0",
    environment,
    ...(options.respond ? { respond: options.respond } : { script: options.script ?? [] }),
  });
  for (let index = 0; index < targetCount; index++) models.push(shared);
  const writer = createInMemoryTranscriptWriter();
  const executions: string[] = [];
  const { result, contract, state } = await runPreparedAgent({
    agent: { id: "test-agent", systemPrompt: "You are a test agent.", settings: options.settings ?? {} },
    prompt: options.prompt ?? "Do the task.",
    targets: Array.from({ length: targetCount }, (_, index) => ({
      provider: "scripted",
      model: `m${index}`,
      contextWindow: options.contextWindow ?? 100_000,
    })),
    models,
    tools: options.tools ?? recordingTools(executions),
    environment,
    transcriptWriter: writer,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.preflight ? { preflight: options.preflight } : {}),
  });
  const verification = verifyEntries(writer.header!, writer.contract, writer.entries, writer.raw);
  return { result, contract, state, writer, model: shared, executions, verification, environment };
}

export const call = (name: string, args: Record<string, unknown> | string, id?: string) => ({
  name,
  arguments: args,
  ...(id ? { id } : {}),
});

export const report = (content: string) => call("final_report", { format: "markdown", content });
