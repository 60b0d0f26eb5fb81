import type { AgentMessage } from "../contract/agent-message.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import { accountingTotals } from "../session/accounting-totals.js";
import type { CharterEvent } from "../session/charter-event.js";
import { deriveCharterEvents } from "../session/derive-charter-events.js";
import type { SessionState } from "../session/session-state.js";
import type { TransitionOutput } from "../session/transition-output.js";

export interface ProgressReporterOptions {
  readonly write: (text: string) => void;
  /** ANSI colours (green ok, red failed, yellow retries and waits, dim details). */
  readonly colour: boolean;
  /** `--verbose`: each model request and response and each tool call's arguments and result preview. */
  readonly verbose: boolean;
  /** Applied to every line before it is written: the run's secret redactor, once the runner has made it. */
  readonly redact: (text: string) => string;
  /** Milliseconds, for the run's wall-clock duration in the summary. */
  readonly now: () => number;
}

export type TransitionObserver = (
  state: SessionState,
  output: TransitionOutput,
  contract: ExecutionContract,
) => void;

/** How many characters of a message or tool result `--verbose` shows. */
const previewCharacters = 200;

const ansi = { red: 31, green: 32, yellow: 33, dim: 2 } as const;

/**
 * Progress on stderr, one line per thing that happened: each turn, each failed model attempt and what comes next
 * (a retry, a fallback to another target, a wait), each tool call with its status and duration, and one summary
 * line at the end (turns, tool calls, tokens, cost, duration). Derived from the run's state transitions (the same
 * events a library user gets), so it says only what the session did.
 */
export function createProgressReporter(options: ProgressReporterOptions): TransitionObserver {
  const { verbose } = options;
  const startedAt = options.now();
  let previous: SessionState | null = null;
  // The target of the last failed attempt: the next attempt on another target is a fallback, not a retry.
  let lastFailedTarget: string | null = null;
  const paint = (colour: keyof typeof ansi, text: string) =>
    options.colour ? `\u001b[${ansi[colour]}m${text}\u001b[0m` : text;
  const line = (text: string) => options.write(`${options.redact(`charter: ${text}`)}\n`);

  // Tool names as the model called them, by call id (accounting names the server's own command).
  const callNames = new Map<string, string>();

  return (state, output, contract) => {
    const events = deriveCharterEvents(previous ?? state, output, contract);
    previous = state;
    // What ended in this transition, then what it recorded (responses, results), then what starts next.
    const ended = (event: CharterEvent) =>
      event.type === "model_attempt_ended" || event.type === "tool_call_ended";
    for (const event of events) if (ended(event)) report(event, output, contract);
    if (verbose) verboseResults(output);
    for (const event of events) if (!ended(event)) report(event, output, contract);
    if (verbose) verboseRequest(output, contract);
  };

  function report(event: CharterEvent, output: TransitionOutput, contract: ExecutionContract): void {
    switch (event.type) {
      case "turn_started":
        line(`turn ${event.turn} of ${event.maxTurns}`);
        return;
      case "model_attempt_started": {
        const effect = output.effect;
        const wait = effect.type === "infer" ? effect.waitMilliseconds : 0;
        const target = `${event.provider}/${event.model}`;
        if (event.attempt > 1) {
          const waiting = wait > 0 ? `, after waiting ${seconds(wait)}` : "";
          const kind = lastFailedTarget !== null && lastFailedTarget !== target ? "fallback" : "retry";
          line(
            paint(
              "yellow",
              `  ${kind}: attempt ${event.attempt} of ${contract.max_retries} with ${target}${waiting}`,
            ),
          );
        } else if (wait > 0) {
          line(
            paint(
              "yellow",
              `  waiting ${seconds(wait)} for ${target} (rate limited or resting after a failure)`,
            ),
          );
        }
        if (event.forcedFinalTurn && event.attempt === 1)
          line(paint("yellow", "  forced final turn: only final_report is offered"));
        return;
      }
      case "model_attempt_ended": {
        const target = `${event.provider}/${event.model}`;
        if (event.status === "failed") {
          lastFailedTarget = target;
          line(
            `  model ${target} ${paint("red", `failed ${event.errorCode ?? ""}`.trim())} ${paint("dim", duration(event.latencyMs))}`,
          );
        } else if (verbose) {
          const cost = event.costUsd === null ? "" : `, $${event.costUsd.toFixed(4)}`;
          line(
            `  model ${target} ${paint("green", "ok")} ${paint("dim", `${duration(event.latencyMs)}, ${event.tokens.input} in / ${event.tokens.output} out tokens${cost}`)}`,
          );
        }
        return;
      }
      case "tool_call_started":
        callNames.set(event.callId, event.name);
        if (verbose) line(paint("dim", `  tool ${event.name} ${preview(JSON.stringify(event.arguments))}`));
        return;
      case "tool_call_ended": {
        const name = callNames.get(event.callId) ?? event.name;
        const status =
          event.status === "ok"
            ? paint("green", "ok")
            : paint("red", `failed ${event.errorCode ?? ""}`.trim());
        line(`  tool ${name} ${status} ${paint("dim", duration(event.latencyMs))}`);
        return;
      }
      case "context_guard_fired":
        line(paint("yellow", `  context guard: ${event.reason}`));
        return;
      case "outcome": {
        const totals = accountingTotals(output.state.accounting);
        const toolCalls = output.state.accounting.filter((entry) => entry.type === "tool").length;
        const tokens = output.state.tokensConsumed;
        const cost = totals.costUsd === null ? "" : `, $${totals.costUsd.toFixed(4)}`;
        const outcome = event.success ? paint("green", event.outcome) : paint("red", event.outcome);
        line(
          `${outcome}: ${event.turns} turn${event.turns === 1 ? "" : "s"}, ${toolCalls} tool call${toolCalls === 1 ? "" : "s"}, ${tokens} tokens (${totals.input} in / ${totals.output} out)${cost}, ${seconds(options.now() - startedAt)}`,
        );
        return;
      }
      default:
        return;
    }
  }

  function verboseRequest(output: TransitionOutput, contract: ExecutionContract): void {
    const effect = output.effect;
    if (effect.type !== "infer") return;
    const target = contract.model_targets[effect.targetIndex];
    const metrics = effect.metrics;
    line(
      paint(
        "dim",
        `  request to ${target?.provider}/${target?.model}: ${effect.messages.length} messages, ${effect.tools.length} tools, ~${metrics.expected_tokens} tokens (context ${metrics.ctx_tokens}, pending ${metrics.pending_ctx_tokens}, tool schemas ${metrics.schema_ctx_tokens})`,
      ),
    );
  }

  function verboseResults(output: TransitionOutput): void {
    for (const entry of output.entries) {
      const result = entry.result as Record<string, unknown> | null;
      if (entry.state === "INFER" && result !== null) {
        const message = result.message as AgentMessage | null | undefined;
        if (message !== null && message !== undefined) {
          const calls = message.tool_calls.map((call) => call.name);
          const parts = [
            message.reasoning ? `reasoning "${preview(message.reasoning)}"` : null,
            message.content !== "" ? `text "${preview(message.content)}"` : null,
            calls.length > 0 ? `tool calls ${calls.join(", ")}` : null,
          ].filter((part) => part !== null);
          line(paint("dim", `  response: ${parts.length === 0 ? "(empty)" : parts.join("; ")}`));
        }
        const failure = result.failure as { message?: string } | undefined;
        if (failure?.message !== undefined) line(paint("dim", `  response: ${failure.message}`));
      } else if (entry.state === "EXECUTE" && result !== null) {
        for (const executed of (result.results as { tool_name: string; content: string }[] | undefined) ??
          []) {
          line(paint("dim", `  result of ${executed.tool_name}: ${preview(executed.content)}`));
        }
      }
    }
  }
}

/**
 * Whether `run` shows progress: on a terminal unless `--json` asked for a machine-readable stdout, always with
 * `--progress` or `--verbose` (plain lines when stderr is not a terminal, so scripts and tests can read them).
 */
export function progressWanted(
  stream: { readonly isTTY?: boolean },
  flags: { readonly json?: boolean; readonly progress?: boolean; readonly verbose?: boolean },
): boolean {
  return flags.progress === true || flags.verbose === true || (stream.isTTY === true && flags.json !== true);
}

/**
 * Colour when the terminal supports it: never with `NO_COLOR` set (https://no-color.org), always with
 * `FORCE_COLOR` set to anything but `0`, otherwise when stderr is a terminal that reports colours.
 */
export function colourWanted(
  stream: { readonly isTTY?: boolean; hasColors?: () => boolean },
  environment: Readonly<Record<string, string | undefined>>,
): boolean {
  if (environment.NO_COLOR !== undefined && environment.NO_COLOR !== "") return false;
  if (environment.FORCE_COLOR !== undefined) return environment.FORCE_COLOR !== "0";
  return stream.isTTY === true && (typeof stream.hasColors === "function" ? stream.hasColors() : true);
}

function preview(text: string): string {
  const flat = text.replace(/\s+/g, " ");
  return flat.length <= previewCharacters
    ? flat
    : `${flat.slice(0, previewCharacters)}... (${flat.length} characters)`;
}

function duration(milliseconds: number): string {
  return milliseconds < 1000 ? `${Math.round(milliseconds)} ms` : seconds(milliseconds);
}

function seconds(milliseconds: number): string {
  return `${(milliseconds / 1000).toFixed(1)} s`;
}
