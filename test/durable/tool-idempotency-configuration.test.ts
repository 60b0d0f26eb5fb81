import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { executionContractSchema } from "../../src/contract/execution-contract.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { runAgent } from "../../src/runner/run-agent.js";
import type { ToolAccountingEntry } from "../../src/session/accounting-entry.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { recordingWorkspace } from "../cli/cli-harness.js";

/**
 * A tool's idempotency class set in configuration (`readOnlyTools`, `idempotentTools`, `destructiveTools`) wins
 * over its MCP annotations, everywhere the class is read, and is part of the contract. The kill -9 half (a tool
 * configured idempotent is re-run on resume) is in kill-points.test.ts.
 */
let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

/** Calls `call` once, then reports; runs in process against the real MCP test server and a SQLite store. */
async function workspace(
  call: ScriptedStep,
  frontmatter: string,
  configuration: Record<string, unknown> = {},
) {
  server = await startScriptedOpenAIServer({
    respond: (request) => {
      const messages = (request.body as { messages: { role: string }[] }).messages;
      return messages.some((message) => message.role === "tool")
        ? {
            kind: "tool_calls",
            calls: [{ name: "final_report", arguments: { format: "markdown", content: "done" } }],
          }
        : call;
    },
  });
  const { directory, recordFile } = await recordingWorkspace({
    prefix: "charter-idempotency-",
    baseUrl: server.baseUrl,
    frontmatter: `models: [local/m]\ntools: [test]${frontmatter}`,
    body: "Use the tools.",
    configuration,
  });
  const environment = deterministicEnvironment();
  const store = join(directory, "charter.db");
  const run = () =>
    runAgent({
      agentPath: join(directory, "agent.md"),
      prompt: "Go.",
      cwd: directory,
      runsDirectory: join(directory, "runs"),
      store,
      environment,
    });
  return { run, recordFile, store };
}

async function storedManifestEntry(store: string, runId: string, tool: string) {
  const opened = await openRunStore({ path: store, environment: deterministicEnvironment() });
  try {
    const contract = executionContractSchema.parse((await opened.getRun(runId))?.contract);
    return contract.tool_manifest.find((entry) => entry.name === tool);
  } finally {
    await opened.close();
  }
}

describe("tool idempotency class from configuration", () => {
  it("an MCP tool not annotated read-only but listed in readOnlyTools is cached across runs", async () => {
    const { run, recordFile } = await workspace(
      { kind: "tool_calls", calls: [{ name: "test__record", arguments: { key: "lookup", value: "1" } }] },
      "\nreadOnlyTools: [test__record]",
      { toolCache: { test: "10m" } },
    );
    const cacheHits = (result: Awaited<ReturnType<typeof run>>) =>
      result.accounting
        .filter((entry): entry is ToolAccountingEntry => entry.type === "tool")
        .map((entry) => entry.cache_hit);
    const first = await run();
    expect(first.success).toBe(true);
    expect(cacheHits(first)).toEqual([false]);
    const second = await run();
    expect(cacheHits(second)).toEqual([true]);
    expect(second.conversation.find((message) => message.role === "tool")?.content).toBe("recorded");
    // The second run was answered from the cache: the tool executed once.
    expect((await readFile(recordFile, "utf8")).trim().split("\n")).toHaveLength(1);
  });

  it("an annotated read-only tool whose server is listed in destructiveTools needs an approval; the contract says so", async () => {
    const { run, store } = await workspace(
      { kind: "tool_calls", calls: [{ id: "call_echo", name: "test__echo", arguments: { text: "hi" } }] },
      "\ndestructiveTools: [test]",
    );
    const stopped = await run();
    expect(stopped).toMatchObject({ outcome: "INTERRUPTED", error: { code: "APPROVAL_REQUIRED" } });
    expect(stopped.finalReport?.metadata).toMatchObject({ pending_approvals: ["call_echo"] });
    // What the run ran under is in its hashed contract: the configured class over the server's annotation.
    expect((await storedManifestEntry(store, stopped.runId, "test__echo"))?.annotations).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
    });
  });

  it("a tool's own entry wins over its server's: readOnlyTools [test__echo] with destructiveTools [test]", async () => {
    const { run } = await workspace(
      { kind: "tool_calls", calls: [{ name: "test__echo", arguments: { text: "hi" } }] },
      "\ndestructiveTools: [test]\nreadOnlyTools: [test__echo]",
    );
    expect(await run()).toMatchObject({ success: true, outcome: "COMPLETED_WITH_TOOLS" });
  });
});
