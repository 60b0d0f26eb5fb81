import type { CreateMessageRequest, ElicitRequest, Tool } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { ToolManifestEntry } from "../../contract/execution-contract.js";
import { CharterError } from "../../foundation/charter-error.js";
import { deepFreeze } from "../../foundation/deep-freeze.js";
import { type RuntimeEnvironment, systemEnvironment } from "../../foundation/environment.js";
import type { McpServerHealth } from "../mcp-server-health.js";
import type {
  RegisteredTool,
  ToolExecutionContext,
  ToolOutput,
  ToolQuestion,
  ToolSource,
} from "../tool-definition.js";
import { createToolNameFilter } from "../tool-name-filter.js";
import { classifyMcpFailure, type McpFailure, mcpClosedFailure } from "./classify-mcp-failure.js";
import { connectMcpRound, McpRoundFailure } from "./connect-mcp-round.js";
import { correlationIdFields } from "./correlation-id-fields.js";
import { lenientCallToolResult } from "./lenient-call-tool-result.js";
import { listMcpTools } from "./list-mcp-tools.js";
import type { McpClientFeatures, McpElicitationHandler, McpSamplingHandler } from "./mcp-client-features.js";
import { mcpContentToOutput } from "./mcp-content-to-output.js";
import { McpHealthTracker } from "./mcp-health-tracker.js";
import { defaultMcpReconnectPolicy, type McpServerDefinition } from "./mcp-server-definition.js";
import { type McpMessageTrace, type McpSession, retireMcpSession } from "./mcp-session.js";
import { mcpCallFailure, mcpNoToolsFailure, mcpStartFailure } from "./mcp-source-errors.js";
import { samplingMessagesToText } from "./sampling-messages-to-text.js";
import { untilAborted } from "./until-aborted.js";

export interface McpSourceOptions {
  /** The clock for health times and the sleeps between reconnection attempts. Default: the system's. */
  readonly environment?: RuntimeEnvironment;
  /** Where a stdio server runs when its definition names no `cwd`. Default: this process's directory. */
  readonly cwd?: string;
  /** Called with the new health after every change of state or last error. */
  readonly onHealthChange?: (health: McpServerHealth) => void;
  /** The limit for connecting and for each page of the tool list; overrides `requestTimeout`. */
  readonly startTimeoutMs?: number;
  /** The backstop for each tool call; overrides `requestTimeout`. */
  readonly callTimeoutMs?: number;
  /** `--trace-mcp`: every JSON-RPC message of every session of this server, sent or received. */
  readonly traceMessage?: McpMessageTrace;
  /**
   * Serves the server's `sampling/createMessage` requests (the runner answers them with the run's own model
   * targets). Absent: the client does not declare sampling.
   */
  readonly sampling?: McpSamplingHandler;
  /** How many sampling requests one tool call may make. Default `defaultMcpSamplingRequestsPerCall`. */
  readonly samplingRequestsPerCall?: number;
  /**
   * Answers the server's questions for the user (elicitation, form mode) from the answers given so far; `null`
   * stops the run for a human answer. Absent: the client does not declare elicitation.
   */
  readonly elicitation?: McpElicitationHandler;
  /**
   * The run's correlation id: sent as `x-correlation-id` with every HTTP request to a remote server, and in the
   * `_meta` of every `tools/call` (`charter/correlationId`) on every transport. Absent: neither is sent.
   */
  readonly correlationId?: string;
}

/**
 * A server may ask for a model completion while its tool runs; each one costs the run tokens and can itself lead
 * the server to ask again. Eight per tool call is room for a server that refines an answer a few times, and bounds
 * one that loops: the ninth request is refused with an error the server sees.
 */
export const defaultMcpSamplingRequestsPerCall = 8;

/** One tool call in flight: what its sampling requests cost, and how many it made. */
interface CallInFlight {
  readonly callId: string;
  readonly accounting: unknown[];
  samplingRequests: number;
  readonly signal: AbortSignal;
  /** A question the server asked that has no answer yet: the call then waits for one. */
  question: ToolQuestion | null;
}

/** A tool source over one MCP server, with its health. */
export interface McpToolSource extends ToolSource {
  readonly type: McpServerDefinition["type"];
  health(): McpServerHealth;
}

/** The limit for connecting and for each page of the tool list when `requestTimeout` is not set. */
export const defaultMcpStartTimeoutMs = 30_000;
/**
 * The limit for a tool call when `requestTimeout` is not set. A backstop only: the pipeline's tool_timeout_ms
 * ends a slow call by aborting its signal, and this must never cut a longer contract timeout short (the SDK's
 * own default is 60 s).
 */
export const defaultMcpCallTimeoutMs = 600_000;

function interrupted(): CharterError {
  return new CharterError("INTERRUPTED", "the tool call was interrupted");
}

/**
 * A tool source over one MCP server of any transport: `stdio` (a child process), `http` (Streamable HTTP) or
 * `sse` (HTTP+SSE), through the official SDK client. `start()` connects, lists every tool (following
 * pagination), keeps those `toolsAllowed`/`toolsDenied` let through, and exposes each as `<server>__<tool>`
 * with its annotations. A server that cannot start, list its tools or offer at least one tool rejects with
 * MCP_SERVER_FAILED, never an empty list.
 *
 * After start, calls never throw past the pipeline: a failure is a failed result with a code. A remote session
 * that the server has forgotten (HTTP 404 with the session id) is re-initialised and the call repeated, since
 * the server never ran it. A lost connection is re-established on the next call, in rounds of
 * `reconnect.attempts` tries with doubling delays; a call lost in flight is repeated only when the tool is
 * declared `readOnlyHint` or `idempotentHint`. A stdio server that exits stays down: it is Charter's own child
 * process, and starting it again mid-run could repeat work whose effects are unknown.
 */
export function createMcpSource(
  serverName: string,
  definition: McpServerDefinition,
  options: McpSourceOptions = {},
): McpToolSource {
  const server = serverName;
  const environment = options.environment ?? systemEnvironment;
  const reconnect = definition.reconnect ?? {};
  const policy = {
    attempts: definition.type === "stdio" ? 1 : (reconnect.attempts ?? defaultMcpReconnectPolicy.attempts),
    initialDelay: reconnect.initialDelay ?? defaultMcpReconnectPolicy.initialDelay,
    maxDelay: reconnect.maxDelay ?? defaultMcpReconnectPolicy.maxDelay,
  };
  const startTimeout = options.startTimeoutMs ?? definition.requestTimeout ?? defaultMcpStartTimeoutMs;
  const callTimeout = options.callTimeoutMs ?? definition.requestTimeout ?? defaultMcpCallTimeoutMs;
  const exposes = createToolNameFilter(definition);
  const callMeta =
    options.correlationId === undefined
      ? {}
      : { _meta: { [correlationIdFields.metaKey]: options.correlationId } };
  const tracker = new McpHealthTracker(
    { server, type: definition.type },
    () => environment.now(),
    options.onHealthChange,
  );
  // Aborted by close(): stops reconnection waits and pending connection attempts.
  const lifetime = new AbortController();
  let started = false;
  let closed = false;
  let current: McpSession | null = null;
  let reconnecting: Promise<McpSession> | null = null;
  let lastAttemptAt: number | null = null;
  const callsInFlight: CallInFlight[] = [];
  const samplingLimit = options.samplingRequestsPerCall ?? defaultMcpSamplingRequestsPerCall;
  const sampling = options.sampling;
  const elicitation = options.elicitation;
  const features: McpClientFeatures = {
    roots: definition.roots ?? [options.cwd ?? process.cwd()],
    ...(sampling === undefined
      ? {}
      : { sampling: (params, signal) => serveSampling(sampling, params, signal) }),
    ...(elicitation === undefined
      ? {}
      : { elicitation: async (params) => serveElicitation(elicitation, params) }),
  };

  /**
   * A question for the user, asked while a tool call runs: answered from the answers given on resume, or, when
   * there is none, cancelled on the server and remembered, so that the call ends waiting for a human answer.
   */
  function serveElicitation(handler: McpElicitationHandler, params: ElicitRequest["params"]): unknown {
    const call = callsInFlight.at(-1);
    if (call === undefined) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        "Charter answers elicitation requests only while one of this server's tools is running",
      );
    }
    if (params.mode === "url") {
      throw new McpError(ErrorCode.InvalidParams, "Charter supports form elicitation only");
    }
    const requestedSchema = (params.requestedSchema ?? {}) as Readonly<Record<string, unknown>>;
    const answer = handler({ server, callId: call.callId, message: params.message, requestedSchema });
    if (answer !== null) return answer;
    call.question ??= { server, message: params.message, requested_schema: requestedSchema };
    return { action: "cancel" };
  }

  /**
   * A sampling request belongs to the tool call in flight (the session runs a run's calls one at a time): its
   * model calls are that call's accounting entries, and it stops when the call does.
   */
  async function serveSampling(
    handler: McpSamplingHandler,
    params: CreateMessageRequest["params"],
    signal: AbortSignal,
  ): Promise<unknown> {
    const call = callsInFlight.at(-1);
    if (call === undefined) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        "Charter answers sampling requests only while one of this server's tools is running",
      );
    }
    if (call.samplingRequests >= samplingLimit) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `sampling limit reached: at most ${samplingLimit} sampling requests per tool call`,
      );
    }
    call.samplingRequests++;
    const answer = await handler({
      server,
      systemPrompt: params.systemPrompt ?? null,
      prompt: samplingMessagesToText(params.messages),
      maxTokens: params.maxTokens,
      signal: AbortSignal.any([signal, call.signal]),
    });
    call.accounting.push(...answer.accounting);
    if (answer.text === null) {
      throw new McpError(ErrorCode.InternalError, "the model gave no answer to the sampling request");
    }
    return {
      role: "assistant",
      content: { type: "text", text: answer.text },
      model: answer.model,
      stopReason: "endTurn",
    };
  }

  function onLost(session: McpSession): void {
    if (session !== current || closed) return;
    current = null;
    const failure = classifyMcpFailure(session.lost?.error ?? null, session);
    tracker.update(definition.type === "stdio" ? "unavailable" : "degraded", { failure });
  }

  /** The last recorded failure, for a call refused without a new attempt. */
  function lastFailure(): McpFailure {
    const last = tracker.current.lastError;
    if (last === null) return mcpClosedFailure;
    return {
      kind: last.kind,
      reason: last.reason,
      retryable: false,
      delivered: "no",
      ...(last.httpStatus === undefined ? {} : { httpStatus: last.httpStatus }),
      ...(last.systemCode === undefined ? {} : { systemCode: last.systemCode }),
      ...(last.exitCode === undefined ? {} : { exitCode: last.exitCode }),
      ...(last.signal === undefined ? {} : { signal: last.signal }),
    };
  }

  /** A round of connection attempts with this server's policy (see `connectMcpRound`). */
  function connectRound<T>(afterConnect: (session: McpSession) => Promise<T>) {
    return connectMcpRound(
      {
        definition,
        policy,
        startTimeoutMs: startTimeout,
        environment,
        signal: lifetime.signal,
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        features,
        onLost,
        onAttempt: () => {
          lastAttemptAt = environment.now();
        },
        ...(options.traceMessage === undefined ? {} : { traceMessage: options.traceMessage }),
        ...(options.correlationId === undefined ? {} : { correlationId: options.correlationId }),
      },
      afterConnect,
    );
  }

  async function reconnectSession(): Promise<McpSession> {
    try {
      const { session } = await connectRound(async () => null);
      current = session;
      tracker.update("healthy", { reconnected: true });
      return session;
    } catch (error) {
      const failure = error instanceof McpRoundFailure ? error.failure : classifyMcpFailure(error, null);
      if (closed) throw mcpCallFailure(server, definition, mcpClosedFailure, "not_running");
      tracker.update("unavailable", { failure });
      throw mcpCallFailure(server, definition, failure, "unavailable");
    } finally {
      reconnecting = null;
    }
  }

  /** The session to call on: the current one, or a new one when it was lost and reconnecting is allowed. */
  function sessionFor(signal: AbortSignal): Promise<McpSession> {
    if (closed || !started) {
      return Promise.reject(mcpCallFailure(server, definition, mcpClosedFailure, "not_running"));
    }
    if (current !== null && current.lost === null) return Promise.resolve(current);
    if (definition.type === "stdio") {
      return Promise.reject(mcpCallFailure(server, definition, lastFailure(), "not_running"));
    }
    if (reconnecting === null) {
      const resting = lastAttemptAt !== null && environment.now() - lastAttemptAt < policy.maxDelay;
      if (tracker.current.state === "unavailable" && resting) {
        return Promise.reject(mcpCallFailure(server, definition, lastFailure(), "unavailable"));
      }
      tracker.update("degraded");
      reconnecting = reconnectSession();
      // Callers may stop waiting (interrupts); the round's own failure is reported to those still waiting.
      reconnecting.catch(() => {});
    }
    return untilAborted(reconnecting, signal, interrupted);
  }

  async function dropSession(session: McpSession, failure: McpFailure): Promise<void> {
    if (current === session) {
      current = null;
      tracker.update(definition.type === "stdio" ? "unavailable" : "degraded", { failure });
    }
    await retireMcpSession(session);
  }

  async function callTool(
    tool: Tool,
    input: Readonly<Record<string, unknown>>,
    context: ToolExecutionContext,
  ): Promise<ToolOutput> {
    // Configuration may declare the tool otherwise than the server does (a destructive class wins over the server's
    // idempotentHint): the class the contract holds is the one that decides.
    const repeatable =
      context.repeatable ??
      (tool.annotations?.readOnlyHint === true || tool.annotations?.idempotentHint === true);
    const inFlight: CallInFlight = {
      callId: context.callId,
      accounting: [],
      samplingRequests: 0,
      signal: context.signal,
      question: null,
    };
    callsInFlight.push(inFlight);
    try {
      const output = await callToolOnce(tool, input, context, repeatable);
      if (inFlight.question !== null) {
        // Whatever the tool made of the cancelled question, the run stops for the answer and calls it again then.
        return {
          text: `(waiting for an answer to: ${inFlight.question.message})`,
          isError: true,
          errorCode: "APPROVAL_REQUIRED",
          question: inFlight.question,
          ...(inFlight.accounting.length === 0 ? {} : { accounting: inFlight.accounting }),
        };
      }
      return inFlight.accounting.length === 0 ? output : { ...output, accounting: inFlight.accounting };
    } catch (error) {
      // Model calls made for a call that then failed were still made: they stay on the failed result.
      if (inFlight.accounting.length > 0 && CharterError.isInstance(error)) {
        return { text: error.message, isError: true, errorCode: error.code, accounting: inFlight.accounting };
      }
      throw error;
    } finally {
      callsInFlight.splice(callsInFlight.indexOf(inFlight), 1);
    }
  }

  async function callToolOnce(
    tool: Tool,
    input: Readonly<Record<string, unknown>>,
    context: ToolExecutionContext,
    repeatable: boolean,
  ): Promise<ToolOutput> {
    for (let attempt = 1; ; attempt++) {
      const session = await sessionFor(context.signal);
      let result: Awaited<ReturnType<typeof session.client.callTool>>;
      try {
        result = await session.client.callTool(
          { name: tool.name, arguments: { ...input }, ...callMeta },
          lenientCallToolResult.schema,
          { signal: context.signal, timeout: callTimeout },
        );
        if (session === current) tracker.update("healthy");
      } catch (error) {
        if (context.signal.aborted) throw interrupted();
        const failure = classifyMcpFailure(error, session);
        if (failure.kind === "protocol") {
          // The server answered: it is working, and the answer is the tool's failure.
          return { text: `MCP server '${server}': ${failure.reason}`, isError: true };
        }
        if (failure.kind === "timeout" || failure.kind === "http_status") {
          const code = failure.kind === "timeout" ? "TOOL_TIMEOUT" : "TOOL_EXECUTION_FAILED";
          if (session === current) tracker.update("degraded", { failure, code });
          throw mcpCallFailure(server, definition, failure, "request_failed", code);
        }
        await dropSession(session, failure);
        const safeToRepeat = failure.delivered === "no" || (failure.delivered === "unknown" && repeatable);
        if (attempt === 1 && safeToRepeat && definition.type !== "stdio") continue;
        const situation =
          definition.type === "stdio"
            ? "not_running"
            : failure.delivered === "no"
              ? "unavailable"
              : "lost_in_flight";
        throw mcpCallFailure(server, definition, failure, situation);
      }
      // The server answered, with something that is not a tools/call result: not a tool failure the model can read
      // and work around, but a broken envelope, which fails the run (FAILED_VALIDATION) with what was wrong.
      const problem = lenientCallToolResult.problemOf(result);
      if (problem !== null) {
        throw new CharterError(
          "TOOL_RESULT_INVALID",
          `MCP server '${server}' answered ${tool.name} with a malformed result: ${problem}`,
          { details: { server, tool: tool.name, problem } },
        );
      }
      const { text, media, binaryResources } = mcpContentToOutput(result);
      return {
        text,
        isError: result.isError === true,
        ...(media.length === 0 ? {} : { media }),
        ...(binaryResources.length === 0 ? {} : { binaryResources }),
      };
    }
  }

  function registered(tool: Tool): RegisteredTool {
    const manifest: ToolManifestEntry = deepFreeze({
      name: `${server}__${tool.name}`,
      description: tool.description ?? tool.title ?? "",
      input_schema: tool.inputSchema as Record<string, unknown>,
      source: { kind: "mcp" as const, server, tool: tool.name },
      annotations: tool.annotations === undefined ? null : { ...tool.annotations },
    });
    return {
      manifest,
      queue: definition.queue ?? null,
      execute: (input, context) => callTool(tool, input, context),
    };
  }

  return {
    name: server,
    type: definition.type,

    health: () => tracker.current,

    async start() {
      if (started) {
        throw new CharterError("INTERNAL_ERROR", `MCP server '${server}' is already started`, {
          details: { server },
        });
      }
      started = true;
      let outcome: { session: McpSession; value: Tool[] };
      try {
        outcome = await connectRound((session) =>
          listMcpTools(session.client, { timeout: startTimeout, signal: lifetime.signal }),
        );
      } catch (error) {
        const round =
          error instanceof McpRoundFailure
            ? error
            : new McpRoundFailure(classifyMcpFailure(error, null), "start", 1, "");
        tracker.update("unavailable", { failure: round.failure });
        throw mcpStartFailure(server, definition, round.failure, round);
      }
      const { session, value: tools } = outcome;
      // A tool that must run as a task (`execution.taskSupport: "required"`) cannot be called with a plain
      // `tools/call`, which is all Charter sends: offering it would only produce failed calls.
      const exposed = tools.filter(
        (tool) => tool.execution?.taskSupport !== "required" && exposes(tool.name, `${server}__${tool.name}`),
      );
      if (exposed.length === 0) {
        await retireMcpSession(session, { terminate: true });
        const failure = mcpNoToolsFailure(
          server,
          definition,
          tools.map((tool) => tool.name),
        );
        tracker.update("unavailable", {
          failure: {
            kind: "protocol",
            reason: String(failure.details.reason),
            retryable: false,
            delivered: "yes",
          },
        });
        throw failure;
      }
      current = session;
      tracker.update(session.lost === null ? "healthy" : "degraded");
      if (session.lost !== null) current = null;
      return exposed.map(registered);
    },

    async close() {
      if (closed) return;
      closed = true;
      lifetime.abort();
      const session = current;
      current = null;
      await retireMcpSession(session, { terminate: true });
      if (started) tracker.update("unavailable");
    },
  };
}
