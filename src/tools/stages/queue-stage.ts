import { failedToolResult } from "../failed-tool-result.js";
import { requireLookedUpTool } from "../require-looked-up-tool.js";
import type { RegisteredTool } from "../tool-definition.js";
import type { ToolCallContext, ToolStage } from "../tool-pipeline.js";
import type { ToolQueue, ToolQueueRelease } from "../tool-queue.js";

// setTimeout fires at once for delays beyond a signed 32-bit integer; longer waits are "practically never".
const maxTimerDelay = 2_147_483_647;

/**
 * Waits for a slot at most `tool_timeout_ms`, and no longer than the run is not interrupted. A call that
 * stops waiting has left the line: it never gets a slot and never runs.
 */
async function waitForSlot(
  call: ToolCallContext,
  queue: ToolQueue,
): Promise<ToolQueueRelease | "timeout" | "interrupted"> {
  if (call.signal.aborted) return "interrupted";
  const immediate = queue.tryAcquire();
  if (immediate !== null) return immediate;
  const stopWaiting = new AbortController();
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      stopWaiting.abort();
    },
    Math.min(call.policy.tool_timeout_ms, maxTimerDelay),
  );
  const onInterrupt = () => stopWaiting.abort();
  call.signal.addEventListener("abort", onInterrupt, { once: true });
  try {
    const release = await queue.acquire(stopWaiting.signal);
    if (release === null) return timedOut ? "timeout" : "interrupted";
    if (call.signal.aborted) {
      release();
      return "interrupted";
    }
    return release;
  } finally {
    clearTimeout(timer);
    call.signal.removeEventListener("abort", onInterrupt);
  }
}

/**
 * Bounds concurrent executions per named queue (`queues.<name>.concurrent`), for tools whose `queue` names
 * one; other tools pass straight through. Insert it before execution:
 * `createDefaultPipeline({ beforeExecution: [queueStage(queues)] })`.
 *
 * A call waits for a slot at most the contract's `tool_timeout_ms` (then `(tool failed: timeout)`, not
 * executed) and stops waiting when the run is interrupted. The slot is held until the tool's own execution
 * has settled, not merely until the pipeline stopped waiting for it: a tool that outlives its timeout still
 * counts against the bound.
 */
export function queueStage(queues: ReadonlyMap<string, ToolQueue>): ToolStage {
  return async (call, next) => {
    const tool = requireLookedUpTool(call, "queueStage");
    const name = tool.queue;
    if (name == null) return next();
    const queue = queues.get(name);
    if (queue === undefined) {
      return failedToolResult(call, "TOOL_EXECUTION_FAILED", `tool queue '${name}' is not configured`);
    }
    const release = await waitForSlot(call, queue);
    if (release === "timeout") return failedToolResult(call, "TOOL_TIMEOUT", "timeout");
    if (release === "interrupted") return failedToolResult(call, "INTERRUPTED", "interrupted");

    let execution: Promise<unknown> | null = null;
    call.tool = Object.create(tool, {
      execute: {
        value: (...parameters: Parameters<RegisteredTool["execute"]>) => {
          const running = tool.execute(...parameters);
          execution = running;
          return running;
        },
      },
    }) as RegisteredTool;
    try {
      return await next();
    } finally {
      call.tool = tool;
      const settled = execution as Promise<unknown> | null;
      if (settled === null) release();
      else settled.then(release, release);
    }
  };
}
