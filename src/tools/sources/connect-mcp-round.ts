import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import { classifyMcpFailure, type McpFailure, mcpClosedFailure } from "./classify-mcp-failure.js";
import type { McpClientFeatures } from "./mcp-client-features.js";
import type { McpReconnectPolicy, McpServerDefinition } from "./mcp-server-definition.js";
import { createMcpSession, type McpMessageTrace, type McpSession, retireMcpSession } from "./mcp-session.js";
import type { McpStartPhase } from "./mcp-source-errors.js";

// setTimeout fires at once for delays beyond a signed 32-bit integer.
const maxTimerDelay = 2_147_483_647;

/** A round that failed: the last failure, how far the last attempt got, and how many attempts were made. */
export class McpRoundFailure extends Error {
  readonly failure: McpFailure;
  readonly phase: McpStartPhase;
  readonly attempts: number;
  readonly stderrTail: string;

  constructor(failure: McpFailure, phase: McpStartPhase, attempts: number, stderrTail: string) {
    super(failure.reason);
    this.name = "McpRoundFailure";
    this.failure = failure;
    this.phase = phase;
    this.attempts = attempts;
    this.stderrTail = stderrTail;
  }
}

export interface McpConnectionRound {
  readonly definition: McpServerDefinition;
  readonly policy: McpReconnectPolicy;
  /** The limit for opening the session (the SSE stream included) and for the `initialize` request. */
  readonly startTimeoutMs: number;
  /** Its clock and sleep pace the waits between attempts. */
  readonly environment: RuntimeEnvironment;
  /** Aborted when the source closes: ends the waits and any attempt in progress. */
  readonly signal: AbortSignal;
  readonly cwd?: string;
  readonly features?: McpClientFeatures;
  readonly onLost: (session: McpSession) => void;
  /** Called as each attempt begins. */
  readonly onAttempt: () => void;
  readonly traceMessage?: McpMessageTrace;
  /** The run's correlation id, for the sessions' HTTP headers. */
  readonly correlationId?: string;
}

async function connect(session: McpSession, round: McpConnectionRound): Promise<void> {
  const timeout = round.startTimeoutMs;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The SDK bounds the initialize request, but not opening an SSE stream that never sends its endpoint.
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new McpError(ErrorCode.RequestTimeout, `no answer within ${timeout} ms`)),
      Math.min(timeout, maxTimerDelay),
    );
  });
  try {
    await Promise.race([
      session.client.connect(session.transport, { timeout, signal: round.signal }),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Up to `policy.attempts` attempts to open a session and run `afterConnect` on it (listing the tools, at
 * start): the first at once, then after `initialDelay`, twice as long each time, at most `maxDelay`. Stops
 * early on a failure another attempt cannot fix (an HTTP 401, a protocol error, an exited stdio server) and
 * when the round's signal aborts. A failed attempt's session is closed; a failed round throws
 * `McpRoundFailure`.
 */
export async function connectMcpRound<T>(
  round: McpConnectionRound,
  afterConnect: (session: McpSession) => Promise<T>,
): Promise<{ session: McpSession; value: T }> {
  const { policy, signal } = round;
  let failure = mcpClosedFailure;
  let phase: McpStartPhase = "start";
  let stderrTail = "";
  let attempt = 0;
  while (attempt < policy.attempts) {
    attempt++;
    if (attempt > 1) {
      const delay = Math.min(policy.initialDelay * 2 ** (attempt - 2), policy.maxDelay);
      await round.environment.sleep(delay, signal);
    }
    if (signal.aborted) break;
    round.onAttempt();
    const session = createMcpSession(round.definition, {
      ...(round.cwd === undefined ? {} : { cwd: round.cwd }),
      ...(round.features === undefined ? {} : { features: round.features }),
      onLost: round.onLost,
      ...(round.traceMessage === undefined ? {} : { traceMessage: round.traceMessage }),
      ...(round.correlationId === undefined ? {} : { correlationId: round.correlationId }),
    });
    phase = "start";
    try {
      await connect(session, round);
      phase = "list_tools";
      const value = await afterConnect(session);
      if (!signal.aborted) return { session, value };
      await retireMcpSession(session);
      failure = mcpClosedFailure;
      break;
    } catch (error) {
      if (session.stdio !== null) {
        // Lets the last stderr chunks, piped through the SDK's stream, arrive before the tail is read.
        await new Promise((resolve) => setImmediate(resolve));
        stderrTail = session.stdio.stderrTail.trim();
      }
      failure = signal.aborted ? mcpClosedFailure : classifyMcpFailure(error, session);
      await retireMcpSession(session);
      if (!failure.retryable) break;
    }
  }
  throw new McpRoundFailure(failure, phase, attempt, stderrTail);
}
