import { describe, expect, it } from "vitest";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { createToolCallExecutor } from "../../src/tools/create-tool-call-executor.js";
import { ToolRegistry } from "../../src/tools/tool-registry.js";
import { anyObject, functionTool, invocation, ok, testPolicy } from "./tool-call-fixture.js";

describe("createToolCallExecutor", () => {
  it("runs calls through the default pipeline with the run's policy, passing the run and call ids to the tool", async () => {
    const seen: string[] = [];
    const registry = new ToolRegistry([
      functionTool("write", anyObject, async (_input, context) => {
        seen.push(`${context.runId}/${context.callId}`);
        return ok("written");
      }),
    ]);
    const execute = createToolCallExecutor({
      registry,
      policy: testPolicy({ cycle_forbid: [["write", "write"]] }),
      environment: deterministicEnvironment(),
      runId: "run_7",
      outputStore: null,
    });
    const signal = new AbortController().signal;
    const first = invocation("write");
    expect(await execute(first, { signal, previousTool: null })).toMatchObject({
      status: "ok",
      call_id: first.id,
    });
    const second = await execute(invocation("write"), { signal, previousTool: "write" });
    expect(second).toMatchObject({ status: "failed", error_code: "CONTRACT_VIOLATION" });
    expect(seen).toEqual([`run_7/${first.id}`]);
  });
});
