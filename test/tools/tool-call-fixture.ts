import type { ToolInvocation } from "../../src/contract/agent-message.js";
import { deterministicEnvironment, type RuntimeEnvironment } from "../../src/foundation/environment.js";
import type { ToolCallPolicy } from "../../src/tools/tool-call-policy.js";
import type { RegisteredTool, ToolExecutionContext, ToolOutput } from "../../src/tools/tool-definition.js";
import type { ToolOutputStore } from "../../src/tools/tool-output-store.js";
import type { ToolCallContext } from "../../src/tools/tool-pipeline.js";
import type { ToolRegistry } from "../../src/tools/tool-registry.js";

export function testPolicy(overrides: Partial<ToolCallPolicy> = {}): ToolCallPolicy {
  return {
    allowed_tools: null,
    tool_policy: "optional",
    cycle_forbid: [],
    tool_timeout_ms: 10_000,
    tool_output_budget: {
      max_bytes_per_call: 1000,
      truncation_marker: "…[truncated]",
      summarizer_model: null,
    },
    ...overrides,
  };
}

let callCounter = 0;

export function invocation(name: string, args: Record<string, unknown> = {}): ToolInvocation {
  callCounter++;
  return { id: `call_${callCounter}`, name, arguments: args, source_model: "test/model", raw_payload: null };
}

export function callContext(
  registry: ToolRegistry,
  name: string,
  args: Record<string, unknown> = {},
  overrides: Partial<Omit<ToolCallContext, "invocation" | "registry">> = {},
): ToolCallContext {
  const call = invocation(name, args);
  return {
    invocation: call,
    registry,
    tool: null,
    policy: testPolicy(),
    previousToolName: null,
    signal: new AbortController().signal,
    runId: "run_0001",
    callId: call.id,
    environment: deterministicEnvironment() as RuntimeEnvironment,
    outputStore: null as ToolOutputStore | null,
    ...overrides,
  };
}

/** A real in-process tool: its behaviour is the given function; `calls` records every execution. */
export function functionTool(
  name: string,
  inputSchema: Record<string, unknown>,
  run: (input: Readonly<Record<string, unknown>>, context: ToolExecutionContext) => Promise<ToolOutput>,
  kind: "function" | "builtin" = "function",
): RegisteredTool & { calls: Readonly<Record<string, unknown>>[] } {
  const calls: Readonly<Record<string, unknown>>[] = [];
  return {
    calls,
    manifest: {
      name,
      description: `test tool ${name}`,
      input_schema: inputSchema,
      source: { kind, server: null, tool: name },
      annotations: null,
    },
    execute(input, context) {
      calls.push(input);
      return run(input, context);
    },
  };
}

export const anyObject = { type: "object" } as const;

export const ok = (text: string): ToolOutput => ({ text, isError: false });
