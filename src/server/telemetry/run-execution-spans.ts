import {
  type Attributes,
  type Context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { canonicalJson } from "../../foundation/canonical-json.js";
import type { SecretRedactor } from "../../foundation/secret-redactor.js";
import type { RunRouting } from "../../runner/run-agent-options.js";
import type { CharterEvent } from "../../session/charter-event.js";
import type { RunRequest } from "../execution/run-request.js";
import { runTelemetry } from "../execution/run-telemetry.js";
import type { GenAiInstruments } from "./gen-ai-instruments.js";
import type { RunExecutionEnding, RunExecutionTelemetry } from "./run-telemetry-exporter.js";

/** Charter's built-ins (handing in the report, reading a stored output) are not the run's tool calls. */
const builtInTools: ReadonlySet<string> = new Set(["final_report", "tool_output"]);

export interface RunExecutionSpansOptions {
  readonly tracer: Tracer;
  readonly instruments: GenAiInstruments;
  readonly request: RunRequest;
  /** The execution's `invoke_agent` span, started by the exporter (its parent and links are the exporter's). */
  readonly runSpan: Span;
  /** The context the run span was started in (the caller's trace, or the run's own). */
  readonly parentContext: Context;
  /** The server's redactor, until the run's own is known. */
  readonly redactor: SecretRedactor;
  /** Wall-clock milliseconds since the epoch (fractional): when things happen. */
  readonly now: () => number;
}

type ModelAttemptEnded = Extract<CharterEvent, { type: "model_attempt_ended" }>;

interface OpenModelCall {
  readonly span: Span;
  readonly startedAt: number;
  readonly provider: string;
  readonly model: string;
}

interface StartedToolCall {
  readonly name: string;
  readonly callId: string;
  readonly turn: number;
  readonly argumentsSize: number;
}

/**
 * The spans and metrics of one execution of a run, built from the runner's event stream as it happens: a child
 * `chat <model>` span per model call attempt (started when the attempt starts, ended when it ends) and an
 * `execute_tool <tool>` span per tool call under the run's `invoke_agent` span. A turn's tool calls run one after
 * the other once the turn's calls are known, and each reports its own latency, so each call's span starts where the
 * previous one ended. Tool arguments and results are never recorded: only names, ids and sizes; every string passes
 * the run's secret redactor.
 */
export function createRunExecutionSpans(options: RunExecutionSpansOptions): RunExecutionTelemetry {
  const { tracer, instruments, request, runSpan, now } = options;
  let redactor = options.redactor;
  const text = (value: string): string => redactor.redactString(value);
  const runContext = trace.setSpan(options.parentContext, runSpan);
  let routing: RunRouting | null = null;
  let agentName = request.agent;
  const modelCalls = new Map<string, OpenModelCall>();
  /** The target of each turn's latest attempt: a later attempt on another target is a failover. */
  const turnTargets = new Map<number, string>();
  const toolCalls = new Map<string, StartedToolCall>();
  /** Per turn, when its next tool call started: the previous call's end. */
  const toolCursors = new Map<number, number>();
  /** Model attempts of delegated work (sub-agents), waiting for the end of the tool call that ran them. */
  const delegatedAttempts: ModelAttemptEnded[] = [];
  let inputTokens = 0;
  let outputTokens = 0;
  let ended = false;

  /** A model call attempt's `chat` span, from `startedAt`, under `parent`. */
  function chatSpan(
    attempt: {
      readonly provider: string;
      readonly model: string;
      readonly turn: number;
      readonly attempt: number;
    },
    startedAt: number,
    parent: Context,
    attributes: Attributes,
  ): Span {
    return tracer.startSpan(
      `chat ${text(attempt.model)}`,
      {
        kind: SpanKind.CLIENT,
        startTime: startedAt,
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": text(attempt.provider),
          "gen_ai.request.model": text(attempt.model),
          "charter.turn": attempt.turn,
          "charter.attempt": attempt.attempt,
          "charter.retry": attempt.attempt > 1,
          ...attributes,
        },
      },
      parent,
    );
  }

  function modelStarted(event: Extract<CharterEvent, { type: "model_attempt_started" }>): void {
    const target = `${event.provider}/${event.model}`;
    const previous = turnTargets.get(event.turn);
    turnTargets.set(event.turn, target);
    const startedAt = now();
    const span = chatSpan(event, startedAt, runContext, {
      "charter.failover": previous !== undefined && previous !== target,
      ...(event.forcedFinalTurn ? { "charter.forced_final_turn": true } : {}),
    });
    modelCalls.set(`${event.turn}/${event.attempt}`, {
      span,
      startedAt,
      provider: event.provider,
      model: event.model,
    });
  }

  /** Ends a model call's span and records its duration and token usage. */
  function modelCallEnded(
    span: Span,
    call: { readonly startedAt: number; readonly provider: string; readonly model: string },
    event: ModelAttemptEnded,
    endedAt: number,
  ): void {
    const failed = event.status === "failed";
    const errorType = failed ? text(event.errorCode ?? "_OTHER") : null;
    span.setAttributes({
      "gen_ai.usage.input_tokens": event.tokens.input,
      "gen_ai.usage.output_tokens": event.tokens.output,
      "charter.model.latency_ms": event.latencyMs,
      ...(failed ? {} : { "gen_ai.response.model": text(event.model) }),
      ...(errorType !== null ? { "error.type": errorType } : {}),
      ...(event.costUsd !== null ? { "charter.cost_usd": event.costUsd } : {}),
    });
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: errorType ?? undefined });
    span.end(endedAt);
    inputTokens += event.tokens.input;
    outputTokens += event.tokens.output;
    const metricAttributes: Attributes = {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": text(call.provider),
      "gen_ai.request.model": text(call.model),
      ...(failed ? {} : { "gen_ai.response.model": text(event.model) }),
      ...(errorType !== null ? { "error.type": errorType } : {}),
    };
    instruments.operationDuration.record(Math.max(0, endedAt - call.startedAt) / 1000, metricAttributes);
    if (!failed || event.tokens.input + event.tokens.output > 0) {
      instruments.tokenUsage.record(event.tokens.input, {
        ...metricAttributes,
        "gen_ai.token.type": "input",
      });
      instruments.tokenUsage.record(event.tokens.output, {
        ...metricAttributes,
        "gen_ai.token.type": "output",
      });
    }
  }

  function modelEnded(event: ModelAttemptEnded): void {
    const key = `${event.turn}/${event.attempt}`;
    const call = modelCalls.get(key);
    // No attempt of this run's own is open under that key: the attempt is delegated work (a sub-agent's, an
    // extraction's), reported once it is over, just before the tool call that ran it ends. It gets its span there,
    // under that call's span.
    if (call === undefined) {
      delegatedAttempts.push(event);
      return;
    }
    modelCalls.delete(key);
    modelCallEnded(call.span, call, event, now());
  }

  /**
   * Spans for the delegated model attempts reported so far, under `parent` (the tool call that ran them, or the
   * run). Their start times are not known, only their latencies: they are laid out one after the other from
   * `startedAt`, none past `endedAt`.
   */
  function delegatedSpans(parent: Span, startedAt: number, endedAt: number): void {
    const parentContext = trace.setSpan(runContext, parent);
    let cursor = startedAt;
    for (const event of delegatedAttempts.splice(0)) {
      const attemptEnd = Math.min(endedAt, cursor + Math.max(0, event.latencyMs));
      const span = chatSpan(event, cursor, parentContext, { "charter.delegated": true });
      modelCallEnded(
        span,
        { startedAt: cursor, provider: event.provider, model: event.model },
        event,
        attemptEnd,
      );
      cursor = attemptEnd;
    }
  }

  function toolStarted(event: Extract<CharterEvent, { type: "tool_call_started" }>): void {
    if (builtInTools.has(event.name)) return;
    toolCalls.set(`${event.turn}/${event.callId}`, {
      name: event.name,
      callId: event.callId,
      turn: event.turn,
      // The size of what the model asked with, never the values: they may hold anything the user typed.
      argumentsSize: canonicalJson(event.arguments).length,
    });
    toolCursors.set(event.turn, now());
  }

  function toolSpan(call: StartedToolCall, startedAt: number, attributes: Attributes): Span {
    return tracer.startSpan(
      `execute_tool ${text(call.name)}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: startedAt,
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": text(call.name),
          "gen_ai.tool.call.id": text(call.callId),
          "gen_ai.tool.type": "function",
          "charter.turn": call.turn,
          "charter.tool.arguments_size": call.argumentsSize,
          ...attributes,
        },
      },
      runContext,
    );
  }

  function toolEnded(event: Extract<CharterEvent, { type: "tool_call_ended" }>): void {
    const key = `${event.turn}/${event.callId}`;
    const call = toolCalls.get(key);
    if (call === undefined) return;
    toolCalls.delete(key);
    const current = now();
    const startedAt = Math.min(toolCursors.get(event.turn) ?? current, current);
    const endedAt = Math.min(current, startedAt + Math.max(0, event.latencyMs));
    toolCursors.set(event.turn, endedAt);
    const failed = event.status === "failed";
    const errorType = failed ? text(event.errorCode ?? "_OTHER") : null;
    const span = toolSpan(call, startedAt, {
      "charter.tool.status": event.status,
      "charter.tool.result_size": event.resultCharacters,
      "charter.tool.latency_ms": event.latencyMs,
      ...(event.cacheHit !== null ? { "charter.tool.cache_hit": event.cacheHit } : {}),
      ...(errorType !== null ? { "error.type": errorType, "charter.tool.error_code": errorType } : {}),
    });
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: errorType ?? undefined });
    delegatedSpans(span, startedAt, endedAt);
    span.end(endedAt);
    instruments.toolDuration.record(Math.max(0, event.latencyMs) / 1000, {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": text(call.name),
      ...(errorType !== null ? { "error.type": errorType } : {}),
    });
  }

  return {
    secretRedactor(runRedactor) {
      redactor = runRedactor;
    },
    routed(routed) {
      if (ended) return;
      routing = routed;
      agentName = routed.agentId;
      const first = routed.targets[0];
      runSpan.updateName(`invoke_agent ${text(routed.agentId)}`);
      runSpan.setAttributes({
        "gen_ai.agent.name": text(routed.agentId),
        "charter.contract.hash": routed.contractHash,
        "charter.agent.selected_by": routed.selection === null ? "named" : "selector",
        ...(first !== undefined
          ? { "gen_ai.provider.name": text(first.provider), "gen_ai.request.model": text(first.model) }
          : {}),
      });
    },
    event(event) {
      if (ended) return;
      switch (event.type) {
        case "model_attempt_started":
          return modelStarted(event);
        case "model_attempt_ended":
          return modelEnded(event);
        case "tool_call_started":
          return toolStarted(event);
        case "tool_call_ended":
          return toolEnded(event);
        default:
          return;
      }
    },
    end(ending: RunExecutionEnding) {
      if (ended) return;
      ended = true;
      const endedAt = now();
      // A model call under way when the run stopped (a drain) was abandoned, not failed: nothing of it counts.
      for (const call of modelCalls.values()) {
        call.span.setAttribute("charter.model.abandoned", true);
        call.span.end(endedAt);
      }
      // Delegated attempts no call of this run claimed (the run stopped first): under the run itself.
      delegatedSpans(
        runSpan,
        endedAt - delegatedAttempts.reduce((sum, event) => sum + event.latencyMs, 0),
        endedAt,
      );
      // Calls that never ended here: the one a human must approve first, or those a stop left unstarted.
      for (const call of toolCalls.values()) {
        const startedAt = Math.min(toolCursors.get(call.turn) ?? endedAt, endedAt);
        toolSpan(call, startedAt, {
          "charter.tool.status": ending.status === "awaiting_approval" ? "awaiting_approval" : "not_run",
        }).end(endedAt);
      }
      const result = ending.result;
      const attributes: Attributes = {
        "charter.execution.status": ending.status,
        "gen_ai.usage.input_tokens": inputTokens,
        "gen_ai.usage.output_tokens": outputTokens,
      };
      if (result !== null) {
        attributes["charter.outcome"] = result.outcome;
        attributes["charter.turns"] = result.turns;
      }
      let errorType: string | null = null;
      if (ending.recordedEnd) {
        const finalState =
          result === null
            ? "error"
            : runTelemetry(result, routing, endedAt - request.requestedAt).final_state;
        attributes["charter.run.final_state"] = finalState;
        if (finalState === "error") errorType = text(result?.error?.code ?? "INTERRUPTED");
        instruments.runs.add(1, {
          "charter.run.final_state": finalState,
          "gen_ai.agent.name": text(agentName),
          "charter.tenant.id": text(request.tenantId),
        });
      }
      if (ending.error !== undefined) {
        const code = (ending.error as { code?: unknown } | null)?.code;
        errorType = text(typeof code === "string" ? code : "_OTHER");
      }
      if (errorType !== null) {
        attributes["error.type"] = errorType;
        runSpan.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
      }
      runSpan.setAttributes(attributes);
      runSpan.end(endedAt);
    },
  };
}
