import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { createDefaultPipeline } from "../../src/tools/create-default-pipeline.js";
import { queueStage } from "../../src/tools/stages/queue-stage.js";
import type { RegisteredTool } from "../../src/tools/tool-definition.js";
import { createToolQueue, type ToolQueue } from "../../src/tools/tool-queue.js";
import { createToolQueues, processToolQueues } from "../../src/tools/tool-queues.js";
import { ToolRegistry } from "../../src/tools/tool-registry.js";
import { anyObject, callContext, functionTool, ok, testPolicy } from "./tool-call-fixture.js";

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

/**
 * A tool that counts how many of its executions run at once. Execution `n` (in start order) signals
 * `started[n]` and finishes when the test resolves `gates[n]`; it ignores its abort signal on purpose.
 */
function gatedTool(name: string, queue: string | null, executions = 8) {
  const started = Array.from({ length: executions }, () => deferred<string>());
  const gates = Array.from({ length: executions }, () => deferred());
  const state = { inFlight: 0, maxInFlight: 0, order: [] as string[] };
  const base = functionTool(name, anyObject, async (input) => {
    const index = state.order.length;
    state.order.push(String(input.label));
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    started[index]!.resolve(String(input.label));
    await gates[index]!.promise;
    state.inFlight--;
    return ok(`done ${String(input.label)}`);
  });
  const tool: RegisteredTool = { ...base, queue };
  return { tool, started, gates, state };
}

function pipelineWith(queues: ReadonlyMap<string, ToolQueue>) {
  return createDefaultPipeline({ beforeExecution: [queueStage(queues)] });
}

describe("named tool queues", () => {
  it("never run more calls at once than the bound, and grant slots in arrival order", async () => {
    const queues = createToolQueues({ search: { concurrent: 2 } });
    const { tool, started, gates, state } = gatedTool("search", "search");
    const registry = new ToolRegistry([tool]);
    const pipeline = pipelineWith(queues);
    const calls = ["a", "b", "c", "d", "e"].map((label) =>
      pipeline(callContext(registry, "search", { label })),
    );

    expect(await started[0]!.promise).toBe("a");
    expect(await started[1]!.promise).toBe("b");
    expect(queues.get("search")).toMatchObject({ running: 2, waiting: 3 });
    expect(state.order).toEqual(["a", "b"]);

    gates[1]!.resolve();
    expect(await started[2]!.promise).toBe("c");
    gates[0]!.resolve();
    expect(await started[3]!.promise).toBe("d");
    gates[2]!.resolve();
    expect(await started[4]!.promise).toBe("e");
    gates[3]!.resolve();
    gates[4]!.resolve();

    const results = await Promise.all(calls);
    expect(results.map((result) => result.content)).toEqual([
      "done a",
      "done b",
      "done c",
      "done d",
      "done e",
    ]);
    expect(state.maxInFlight).toBe(2);
    expect(queues.get("search")).toMatchObject({ running: 0, waiting: 0 });
  });

  it("cancels a waiting call on interrupt: it leaves the line, never runs, and leaks no slot", async () => {
    const queues = createToolQueues({ single: { concurrent: 1 } });
    const { tool, started, gates, state } = gatedTool("work", "single");
    const registry = new ToolRegistry([tool]);
    const pipeline = pipelineWith(queues);
    const first = pipeline(callContext(registry, "work", { label: "first" }));
    await started[0]!.promise;

    const interrupt = new AbortController();
    const waiting = pipeline(
      callContext(registry, "work", { label: "waiting" }, { signal: interrupt.signal }),
    );
    const queue = queues.get("single")!;
    expect(queue.waiting).toBe(1);
    interrupt.abort();
    expect(await waiting).toMatchObject({ status: "failed", error_code: "INTERRUPTED", executed: false });
    expect(queue.waiting).toBe(0);

    gates[0]!.resolve();
    expect(await first).toMatchObject({ status: "ok", content: "done first" });
    const after = pipeline(callContext(registry, "work", { label: "after" }));
    expect(await started[1]!.promise).toBe("after");
    gates[1]!.resolve();
    expect(await after).toMatchObject({ status: "ok" });
    expect(state.order).toEqual(["first", "after"]);
    expect(queue).toMatchObject({ running: 0, waiting: 0 });
  });

  it("gives up waiting after tool_timeout_ms with (tool failed: timeout), not executed", async () => {
    const queues = createToolQueues({ single: { concurrent: 1 } });
    const { tool, started, gates, state } = gatedTool("work", "single");
    const registry = new ToolRegistry([tool]);
    const pipeline = pipelineWith(queues);
    const holder = pipeline(callContext(registry, "work", { label: "holder" }));
    await started[0]!.promise;

    const impatient = await pipeline(
      callContext(registry, "work", { label: "impatient" }, { policy: testPolicy({ tool_timeout_ms: 30 }) }),
    );
    expect(impatient).toMatchObject({
      status: "failed",
      error_code: "TOOL_TIMEOUT",
      content: "(tool failed: timeout)",
      executed: false,
    });
    gates[0]!.resolve();
    await holder;
    expect(state.order).toEqual(["holder"]);
    expect(queues.get("single")).toMatchObject({ running: 0, waiting: 0 });
  });

  it("holds the slot until a timed-out tool has really finished", async () => {
    const queues = createToolQueues({ single: { concurrent: 1 } });
    const { tool, started, gates, state } = gatedTool("work", "single");
    const registry = new ToolRegistry([tool]);
    const pipeline = pipelineWith(queues);
    const short = { policy: testPolicy({ tool_timeout_ms: 30 }) };

    // The tool ignores its signal: the pipeline stops waiting for it, but it is still running.
    const abandoned = await pipeline(callContext(registry, "work", { label: "stubborn" }, short));
    expect(abandoned).toMatchObject({ status: "failed", error_code: "TOOL_TIMEOUT", executed: true });
    expect(state.inFlight).toBe(1);
    expect(queues.get("single")!.running).toBe(1);

    const blocked = await pipeline(callContext(registry, "work", { label: "blocked" }, short));
    expect(blocked).toMatchObject({ status: "failed", error_code: "TOOL_TIMEOUT", executed: false });
    expect(state.order).toEqual(["stubborn"]);

    const next = pipeline(callContext(registry, "work", { label: "next" }));
    gates[0]!.resolve();
    expect(await started[1]!.promise).toBe("next");
    gates[1]!.resolve();
    expect(await next).toMatchObject({ status: "ok", content: "done next" });
    expect(state.maxInFlight).toBe(1);
  });

  it("let tools without a queue through, and fail a call whose queue is not configured", async () => {
    const free = functionTool("free", anyObject, async () => ok("free"));
    const orphan: RegisteredTool = {
      ...functionTool("orphan", anyObject, async () => ok("never")),
      queue: "missing",
    };
    const registry = new ToolRegistry([free, orphan]);
    const pipeline = pipelineWith(createToolQueues({}));
    expect(await pipeline(callContext(registry, "free"))).toMatchObject({ status: "ok", content: "free" });
    const result = await pipeline(callContext(registry, "orphan"));
    expect(result).toMatchObject({ status: "failed", error_code: "TOOL_EXECUTION_FAILED", executed: false });
    expect(result.content).toContain("'missing'");
  });

  it("are shared across the process by name and bound", async () => {
    const definitions = { shared: { concurrent: 1 } };
    const firstRun = processToolQueues(definitions);
    const secondRun = processToolQueues({ ...definitions });
    expect(secondRun.get("shared")).toBe(firstRun.get("shared"));
    expect(processToolQueues({ shared: { concurrent: 3 } }).get("shared")).not.toBe(firstRun.get("shared"));

    const { tool, started, gates, state } = gatedTool("work", "shared");
    const registry = new ToolRegistry([tool]);
    const one = pipelineWith(firstRun)(callContext(registry, "work", { label: "run 1" }));
    await started[0]!.promise;
    const two = pipelineWith(secondRun)(callContext(registry, "work", { label: "run 2" }));
    expect(firstRun.get("shared")!.waiting).toBe(1);
    gates[0]!.resolve();
    expect(await started[1]!.promise).toBe("run 2");
    gates[1]!.resolve();
    await Promise.all([one, two]);
    expect(state.maxInFlight).toBe(1);
  });

  it("refuse a bound that is not a positive integer", () => {
    for (const concurrent of [0, -1, 1.5, Number.NaN]) {
      let error: unknown;
      try {
        createToolQueue("q", concurrent);
      } catch (caught) {
        error = caught;
      }
      expect(CharterError.isInstance(error) && error.code).toBe("CONFIGURATION_INVALID");
    }
  });

  it("hand a slot to nobody whose signal was already aborted", async () => {
    const queue = createToolQueue("q", 1);
    const aborted = new AbortController();
    aborted.abort();
    expect(await queue.acquire(aborted.signal)).toBeNull();
    const release = queue.tryAcquire();
    expect(release).not.toBeNull();
    expect(queue.tryAcquire()).toBeNull();
    release!();
    release!();
    expect(queue.running).toBe(0);
  });
});
