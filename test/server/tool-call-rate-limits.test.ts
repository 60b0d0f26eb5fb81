import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { acceptRunRequest } from "../../src/server/execution/accept-run-request.js";
import { executeRunRequest } from "../../src/server/execution/execute-run-request.js";
import type { RunRequest } from "../../src/server/execution/run-request.js";
import { loadRunExecutionSetup } from "../../src/server/load-run-execution-setup.js";
import {
  executionContext,
  postgresTestUrl,
  reportStep,
  runRequest,
  testStoreOn,
  testWorkspace,
  toolAnswers,
  wireMessages,
} from "./execution-harness.js";

const backends = postgresTestUrl === "" ? ["sqlite"] : ["sqlite", "postgres"];

describe.each(backends)("tool-call rate limits on %s", (backend) => {
  it("a call over its tenant's or user's tool-class limit is a rate_limit_exceeded tool failure with retryAfter, never run; the next window runs it", async () => {
    // The prompt says how many writes (and reads) to make in the first turn; then the run reports.
    const workspace = await testWorkspace({
      respond: (request) => {
        if (toolAnswers(request) > 0) return reportStep("done");
        const prompt = wireMessages(request).at(-1)?.content ?? "";
        const writes = Number(/writes=(\d+)/.exec(prompt)?.[1] ?? 0);
        const reads = Number(/reads=(\d+)/.exec(prompt)?.[1] ?? 0);
        return {
          kind: "tool_calls",
          calls: [
            ...Array.from({ length: writes }, (_, index) => ({
              id: `call_w${index}`,
              name: "rest__record",
              arguments: { key: `w${index}` },
            })),
            ...Array.from({ length: reads }, (_, index) => ({
              id: `call_r${index}`,
              name: "rest__read",
              arguments: { key: `r${index}` },
            })),
          ],
        };
      },
    });
    const testStore = await testStoreOn(backend, workspace.directory);
    const environment = deterministicEnvironment({ start: Date.UTC(2026, 0, 1) });
    const context = executionContext(workspace, testStore.store, {
      environment,
      toolCallLimits: { perTenant: { write: 3 }, perUser: { write: 2 } },
    });
    const store = testStore.store;
    const run = async (overrides: Partial<RunRequest>) => {
      const request = runRequest(overrides);
      await acceptRunRequest(request, context);
      expect((await executeRunRequest(request, context)).status).toBe("completed");
      const events = await store.forTenant(request.tenantId).readRunEvents(request.runId);
      return events
        .filter((event) => event.type === "TOOL_CALL")
        .map(
          (event) =>
            event.data as {
              tool: string;
              status: string;
              error_code: string | null;
              error_class: string | null;
            },
        );
    };
    const refusedCall = {
      tool: "rest__record",
      status: "failed",
      error_code: "RATE_LIMIT_EXCEEDED",
      error_class: "rate_limit_exceeded",
    };
    const okCall = (tool: string) => ({ tool, status: "ok", error_code: null });

    // ann: three writes and two reads in one turn; her user may make two writes a minute, reads are not limited.
    const first = await run({ userId: "ann", prompt: "writes=3 reads=2" });
    expect(first.filter((call) => call.status === "ok")).toHaveLength(4);
    expect(first.filter((call) => call.error_code === "RATE_LIMIT_EXCEEDED")).toEqual([
      expect.objectContaining(refusedCall),
    ]);
    expect(workspace.tools.requests.filter((sent) => sent.method === "POST")).toHaveLength(2);
    // The model was told, with when to try again (the window began with the run's clock, a whole minute).
    const told = wireMessages(workspace.model.requests.at(-1)!)
      .filter((message) => message.role === "tool")
      .map((message) => message.content ?? "");
    expect(told.filter((content) => content.startsWith("(tool failed: rate_limit_exceeded:"))).toEqual([
      expect.stringMatching(/this user may make at most 2 write tool calls a minute; retryAfter: 60\)$/),
    ]);

    // bob, same tenant: the tenant's third write was ann's refused one; bob's one write is the tenant's fourth.
    environment.advance(15_000);
    const second = await run({ userId: "bob", prompt: "writes=1" });
    expect(second).toEqual([expect.objectContaining(refusedCall)]);
    const toldBob = wireMessages(workspace.model.requests.at(-1)!)
      .filter((message) => message.role === "tool")
      .map((message) => message.content);
    expect(toldBob).toEqual([
      expect.stringMatching(/this tenant may make at most 3 write tool calls a minute; retryAfter: 45\)$/),
    ]);

    // Another tenant is counted apart.
    expect(await run({ tenantId: "globex", userId: "ann", prompt: "writes=2" })).toEqual([
      expect.objectContaining(okCall("rest__record")),
      expect.objectContaining(okCall("rest__record")),
    ]);
    expect(workspace.tools.requests.filter((sent) => sent.method === "POST")).toHaveLength(4);

    // The next window: bob's write runs.
    environment.advance(45_000);
    expect(await run({ userId: "bob", prompt: "writes=1" })).toEqual([
      expect.objectContaining(okCall("rest__record")),
    ]);
    expect(workspace.tools.requests.filter((sent) => sent.method === "POST")).toHaveLength(5);
  });
});

describe("tool-call rate limits from the configuration file", () => {
  it("server.rateLimits.toolCalls in the file `charter serve --config` and `charter worker --config` read limits their runs", async () => {
    const workspace = await testWorkspace({
      respond: (request) =>
        toolAnswers(request) > 0
          ? reportStep("done")
          : {
              kind: "tool_calls",
              calls: [
                { id: "call_w0", name: "rest__record", arguments: { key: "w0" } },
                { id: "call_w1", name: "rest__record", arguments: { key: "w1" } },
              ],
            },
    });
    const configPath = join(workspace.directory, "server.json");
    await writeFile(
      configPath,
      JSON.stringify({ server: { rateLimits: { toolCalls: { perUser: { write: 1 } } } } }),
    );
    const setup = await loadRunExecutionSetup({
      cwd: workspace.directory,
      configPath,
      processEnvironment: {},
    });
    const testStore = await testStoreOn("sqlite", workspace.directory);
    const context = {
      ...setup.executionContext(testStore.store),
      // The test's own directories, not the user's.
      homeDirectory: workspace.directory,
      etcDirectory: join(workspace.directory, "etc"),
      runsDirectory: join(workspace.directory, "runs"),
    };
    const request = runRequest({ prompt: "writes=2" });
    await acceptRunRequest(request, context);
    expect((await executeRunRequest(request, context)).status).toBe("completed");
    const calls = (await testStore.store.forTenant("acme").readRunEvents(request.runId))
      .filter((event) => event.type === "TOOL_CALL")
      .map((event) => [event.data.call_id, event.data.status, event.data.error_code]);
    expect(calls).toEqual([
      ["call_w0", "ok", null],
      ["call_w1", "failed", "RATE_LIMIT_EXCEEDED"],
    ]);
    expect(workspace.tools.requests.filter((sent) => sent.method === "POST")).toHaveLength(1);
  });
});
