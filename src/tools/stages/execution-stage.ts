import { CharterError } from "../../foundation/charter-error.js";
import { describeError } from "../describe-error.js";
import { failedToolResult } from "../failed-tool-result.js";
import { requireLookedUpTool } from "../require-looked-up-tool.js";
import type { ToolOutput } from "../tool-definition.js";
import { freezeToolResult } from "../tool-execution-result.js";
import type { ToolStage } from "../tool-pipeline.js";

type Settled =
  | { readonly kind: "output"; readonly output: ToolOutput }
  | { readonly kind: "error"; readonly error: unknown }
  | { readonly kind: "timeout" }
  | { readonly kind: "interrupted" };

/** The decoded size of base64 text. */
function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

// setTimeout fires at once for delays beyond a signed 32-bit integer; longer timeouts are "practically never".
const maxTimerDelay = 2_147_483_647;

function isToolOutput(value: unknown): value is ToolOutput {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Partial<ToolOutput>;
  return typeof candidate.text === "string" && typeof candidate.isError === "boolean";
}

/**
 * Runs the tool within `tool_timeout_ms` (seed 000 §3). On timeout the tool's signal is aborted and the result
 * is `(tool failed: timeout)`; an interrupted run aborts it too. The pipeline stops waiting at once, so a tool
 * that ignores its signal cannot hold the run. A thrown error, a tool-reported error and a malformed output
 * envelope are failed results (TOOL_EXECUTION_FAILED, or the thrown CharterError's own code;
 * TOOL_RESULT_INVALID for the envelope). Accounting entries the tool reports (a child run's model calls) stay
 * on the result, failed or not. Does not call `next`: this is where the call is served.
 */
export const executionStage: ToolStage = async (call) => {
  const tool = requireLookedUpTool(call, "executionStage");
  if (call.signal.aborted) return failedToolResult(call, "INTERRUPTED", "interrupted");

  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onInterrupt: (() => void) | undefined;
  const stopped = new Promise<Settled>((resolve) => {
    timer = setTimeout(
      () => resolve({ kind: "timeout" }),
      Math.min(call.policy.tool_timeout_ms, maxTimerDelay),
    );
    onInterrupt = () => resolve({ kind: "interrupted" });
    call.signal.addEventListener("abort", onInterrupt, { once: true });
  });

  let running: Promise<ToolOutput>;
  try {
    running = tool.execute(call.invocation.arguments, {
      signal: controller.signal,
      runId: call.runId,
      callId: call.callId,
    });
  } catch (error) {
    running = Promise.reject(error);
  }
  // Both outcomes are mapped, so a tool that rejects after the pipeline stopped waiting is never unhandled.
  const finished = Promise.resolve(running).then(
    (output): Settled => ({ kind: "output", output }),
    (error: unknown): Settled => ({ kind: "error", error }),
  );

  let settled: Settled;
  try {
    settled = await Promise.race([finished, stopped]);
  } finally {
    clearTimeout(timer);
    if (onInterrupt !== undefined) call.signal.removeEventListener("abort", onInterrupt);
  }

  switch (settled.kind) {
    case "timeout":
      controller.abort(new CharterError("TOOL_TIMEOUT", `tool '${call.invocation.name}' timed out`));
      return failedToolResult(call, "TOOL_TIMEOUT", "timeout", { executed: true });
    case "interrupted":
      controller.abort(call.signal.reason);
      return failedToolResult(call, "INTERRUPTED", "interrupted", { executed: true });
    case "error": {
      const code = CharterError.isInstance(settled.error) ? settled.error.code : "TOOL_EXECUTION_FAILED";
      return failedToolResult(call, code, describeError(settled.error), { executed: true });
    }
    case "output": {
      const { output } = settled;
      if (!isToolOutput(output)) {
        return failedToolResult(call, "TOOL_RESULT_INVALID", "the tool returned a malformed result", {
          executed: true,
        });
      }
      const accounting = Array.isArray(output.accounting) ? output.accounting : undefined;
      if (output.isError) {
        const failed = failedToolResult(call, output.errorCode ?? "TOOL_EXECUTION_FAILED", output.text, {
          executed: true,
        });
        if (accounting === undefined && output.question === undefined) return failed;
        return freezeToolResult({
          ...failed,
          ...(accounting === undefined ? {} : { accounting }),
          ...(output.question === undefined ? {} : { question: output.question }),
        });
      }
      const attachments = (output.media ?? []).map((media) => ({
        type: media.type,
        media_type: media.mediaType,
        bytes: base64Bytes(media.data),
        data: media.data,
      }));
      const binaryResources = output.binaryResources ?? [];
      return freezeToolResult({
        ...(accounting === undefined ? {} : { accounting }),
        ...(attachments.length === 0 ? {} : { attachments }),
        ...(binaryResources.length === 0 ? {} : { binary_resources: binaryResources }),
        call_id: call.invocation.id,
        tool_name: call.invocation.name,
        status: "ok",
        error_code: null,
        content: output.text,
        executed: true,
        latency_ms: 0,
        characters_in: 0,
        characters_out: 0,
        handle: null,
        source: tool.manifest.source,
      });
    }
  }
};
