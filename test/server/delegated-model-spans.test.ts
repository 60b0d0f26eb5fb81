import { join } from "node:path";
import { context } from "@opentelemetry/api";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterEach, describe, expect, it } from "vitest";
import { runAgentWithRegistry } from "../../src/agents/run-agent-with-registry.js";
import { SecretRedactor } from "../../src/foundation/secret-redactor.js";
import { genAiInstruments } from "../../src/server/telemetry/gen-ai-instruments.js";
import { createRunExecutionSpans } from "../../src/server/telemetry/run-execution-spans.js";
import type { CharterEvent } from "../../src/session/charter-event.js";
import {
  type RecordedRequest,
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { agentText, projectWith } from "../agents/agent-files.js";
import { localModelProvider } from "../cli/cli-harness.js";

let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const report = (content: string): ScriptedStep => ({
  kind: "tool_calls",
  calls: [{ name: "final_report", arguments: { format: "markdown", content } }],
});

/** Which agent a request to the model is for (its system prompt says "I am <name>"), and whether a tool answered. */
function askedBy(request: RecordedRequest): { name: string; answered: boolean } {
  const messages = (request.body as { messages: { role: string; content?: string }[] }).messages;
  return {
    name: /I am (\w+)/.exec(messages[0]?.content ?? "")?.[1] ?? "unknown",
    answered: messages.some((message) => message.role === "tool"),
  };
}

describe("a run's spans when it delegates to a sub-agent", () => {
  it("give each of the sub-agent's model calls a chat span under the delegating tool call's span, counted in the run's usage", async () => {
    server = await startScriptedOpenAIServer({
      respond: (request) => {
        const { name, answered } = askedBy(request);
        if (name === "coder") return report("fixed it");
        return answered
          ? report("done")
          : {
              kind: "tool_calls",
              calls: [{ id: "call_delegate", name: "delegate", arguments: { task: "Fix the test" } }],
            };
      },
    });
    const directory = await projectWith({
      "agents/lead.md": agentText("delegation: auto", "I am lead."),
      "agents/coder.md": agentText("exampleTasks: [Fix the test]", "I am coder."),
      ".charter.json": JSON.stringify({
        providers: localModelProvider(server.baseUrl),
        defaults: { models: ["local/m"] },
      }),
    });
    const events: CharterEvent[] = [];
    const result = await runAgentWithRegistry({
      agentPath: "lead",
      prompt: "Get the build green.",
      cwd: directory,
      homeDirectory: directory,
      runsDirectory: join(directory, "runs"),
      onEvent: (event) => events.push(event),
    });
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");

    // The run's events, as the server's telemetry is told them, into the real OpenTelemetry SDK.
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    const tracer = tracerProvider.getTracer("test");
    const meterProvider = new MeterProvider();
    let clock = 1_000_000;
    const runSpan = tracer.startSpan("invoke_agent", { startTime: clock });
    const telemetry = createRunExecutionSpans({
      tracer,
      instruments: genAiInstruments(meterProvider.getMeter("test")),
      request: {
        runId: result.runId,
        requestId: "req_1",
        tenantId: "acme",
        userId: null,
        role: "operator",
        correlationId: "corr_1",
        conversationId: null,
        agent: "lead",
        prompt: "Get the build green.",
        input: null,
        metadata: {},
        requestedAt: clock,
      },
      runSpan,
      parentContext: context.active(),
      redactor: new SecretRedactor(),
      now: () => clock,
    });
    for (const event of events) {
      clock += 10;
      telemetry.event(event);
    }
    telemetry.end({ status: "completed", result, recordedEnd: true });
    await tracerProvider.forceFlush();

    const spans = exporter.getFinishedSpans();
    const chats = spans.filter((span) => span.name.startsWith("chat "));
    const delegateCall = spans.find((span) => span.name === "execute_tool delegate");
    expect(delegateCall).toBeDefined();
    // lead asks twice (delegates, then reports); coder once, inside the delegate call.
    expect(chats).toHaveLength(3);
    const delegated = chats.filter((span) => span.attributes["charter.delegated"] === true);
    expect(delegated).toHaveLength(1);
    expect(delegated[0]!.parentSpanContext?.spanId).toBe(delegateCall!.spanContext().spanId);
    const own = chats.filter((span) => span.attributes["charter.delegated"] !== true);
    for (const span of own) expect(span.parentSpanContext?.spanId).toBe(runSpan.spanContext().spanId);
    // The run's usage counts every model call it paid for, the sub-agent's included.
    const modelEntries = result.accounting.filter((entry) => entry.type === "llm");
    expect(modelEntries).toHaveLength(3);
    const inputTokens = modelEntries.reduce((sum, entry) => sum + entry.tokens.input, 0);
    const runSpanRecord = spans.find((span) => span.name === "invoke_agent");
    expect(runSpanRecord?.attributes["gen_ai.usage.input_tokens"]).toBe(inputTokens);
    expect(delegated[0]!.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
    await meterProvider.shutdown();
  });
});
