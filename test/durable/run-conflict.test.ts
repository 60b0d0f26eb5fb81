import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { prepareAgent } from "../../src/runner/prepare-agent.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import { createStrictScriptedModel } from "../../src/testing/strict-scripted-model.js";
import { defineFunctionTool } from "../../src/tools/define-function-tool.js";
import { runDurably } from "./run-durably.js";

/**
 * A durable session whose stored run another process stops meanwhile (as a second resume, or an operator, would):
 * its next write is refused, and the run ends with RUN_CONFLICT without storing anything more. The end-to-end
 * case, two `charter resume` processes at once, is in kill-points.test.ts.
 */
describe("a run another process stopped meanwhile (issue 4)", () => {
  it("ends with RUN_CONFLICT, resolves (a run never throws), and leaves the stored run as the other left it", async () => {
    const directory = await mkdtemp(join(tmpdir(), "charter-conflict-"));
    const environment = deterministicEnvironment();
    const store = await openRunStore({ path: join(directory, "runs.db"), environment });
    const runId = "run-conflict";
    try {
      let stoppedAt: number | null = null;
      const stopFromElsewhere = defineFunctionTool({
        name: "stop_elsewhere",
        description: "Stands for another process that stops the run while this call runs.",
        inputSchema: { type: "object", properties: {} },
        async execute() {
          const run = await store.getRun(runId);
          stoppedAt = run?.entryCount ?? null;
          await store.finishRun({ runId, status: "interrupted", outcome: "INTERRUPTED" });
          return "stopped";
        },
      });
      const model = createStrictScriptedModel({
        provider: "test",
        model: "scripted",
        script: [{ kind: "tool_calls", calls: [{ id: "call_1", name: "stop_elsewhere", arguments: {} }] }],
      });
      const agent = prepareAgent({
        agent: { id: "conflict", systemPrompt: "Go.", settings: { maxTurns: 4, toolPolicy: "optional" } },
        targets: [{ provider: "test", model: "scripted", contextWindow: 1_000_000 }],
        models: [model],
        tools: [stopFromElsewhere],
        environment,
      });
      const { result } = await runDurably(agent, store, runId, { agentId: "conflict", classes: true });
      expect(result).toMatchObject({
        success: false,
        error: { code: "RUN_CONFLICT", details: { runId, reason: "run_not_running" } },
      });
      // The turn's COMMIT checkpoint was refused; the run is as the other process left it.
      const stored = await store.getRun(runId);
      expect(stored).toMatchObject({ status: "interrupted", outcome: "INTERRUPTED", entryCount: stoppedAt });
    } finally {
      await store.close();
    }
  });
});
