import { isAgentIdReference } from "../../config/agent-reference.js";
import { type ConfigurationCache, createConfigurationCache } from "../../config/configuration-cache.js";
import { canonicalJson } from "../../foundation/canonical-json.js";
import { CharterError } from "../../foundation/charter-error.js";
import type { ErrorCode } from "../../foundation/error-codes.js";
import { SecretRedactor } from "../../foundation/secret-redactor.js";
import { autoAgentReference } from "../../runner/agent-catalog.js";
import { preflightFailureResult } from "../../runner/preflight-failure-result.js";
import { resumeStoredRun } from "../../runner/resume-stored-run.js";
import { type RunAgentOptions, type RunRouting, runAgent } from "../../runner/run-agent.js";
import type { AIAgentResult } from "../../session/agent-result.js";
import type { CharterEvent } from "../../session/charter-event.js";
import { type RunEventType, settledRunEventTypes } from "../../store/run-event-records.js";
import type { RunStore } from "../../store/run-store.js";
import { failureClassOf } from "../failure-class.js";
import { createToolCallAdmission } from "../limits/tool-call-rate-limiter.js";
import type { ProviderKeySource } from "../tenants/resolve-tenant-settings.js";
import { appendRequestEvent } from "./append-request-event.js";
import { conversationHistory } from "./conversation-history.js";
import { defaultRoleToolClasses } from "./role-tool-classes.js";
import type { RunExecutionContext } from "./run-execution-context.js";
import type { RunDecisionRequest, RunRequest } from "./run-request.js";
import { runTelemetry } from "./run-telemetry.js";
import { tenantModelCallBudget } from "./tenant-model-call-budget.js";

/**
 * How an execution left the run: `completed` and `failed` are the end of its lifecycle (COMPLETED or FAILED is
 * recorded), `awaiting_approval` a stop until a human decides (AWAITING_APPROVAL), `suspended` a stop without an
 * event for another execution to continue it: this process was draining, or another process continues the run.
 */
export type RunExecutionStatus = "completed" | "failed" | "awaiting_approval" | "suspended";

export interface RunExecutionOutcome {
  readonly status: RunExecutionStatus;
  /** The run's result; null when nothing ran (the run was cancelled before it started, say). */
  readonly result: AIAgentResult | null;
  /** True when this execution recorded the run's COMPLETED or FAILED (not a run found settled already). */
  readonly recordedEnd?: boolean;
}

export interface RunExecutionOptions {
  /**
   * Stops the run at its next checkpoint: a cancellation (recorded) or a drain (the run is left to continue). Tool
   * calls under way are let finish first (the turn reaches its checkpoint with their results), and no further call
   * starts; a model call under way is abandoned (nothing of it is committed, so a continuation asks again).
   */
  readonly signal?: AbortSignal;
  /** Told once the run is stored and under way (its EXECUTING event is being recorded). */
  readonly onExecuting?: () => void;
  /** Told what the runner tells the server as the run goes (its telemetry spans are built from it). */
  readonly observer?: RunExecutionObserver;
}

/** The runner's news a server's run telemetry follows: the run's redactor, its routing, its event stream. */
export interface RunExecutionObserver {
  secretRedactor(redactor: SecretRedactor): void;
  routed(routing: RunRouting): void;
  event(event: CharterEvent): void;
}

/** Why a stored run is continued: a human's decision, or its process is gone (or drained) and this one takes it. */
export type RunContinuation =
  | { readonly kind: "decision"; readonly decision: RunDecisionRequest }
  | { readonly kind: "takeover" };

const builtInTools: ReadonlySet<string> = new Set(["final_report", "tool_output"]);

/**
 * Why a run that another execution has (started it first, resumed it first, wrote to it first) stopped here: the
 * store's fences, met by two processes racing for one run. Nothing is recorded for them: the run is the other's.
 */
const lostRaceReasons: ReadonlySet<unknown> = new Set([
  "concurrent_resume",
  "chain_mismatch",
  "run_not_running",
  "run_exists",
]);

/**
 * Executes a run the server accepted (its REQUESTED event is stored): the agent resolved through the registry
 * (`auto` by the selector), under the run id, tenant, correlation id and conversation of the request, with the
 * tools its role's classes allow and every delete-class call waiting for a human. Each lifecycle transition is
 * stored as an event, in order: ROUTED, EXECUTING, a TOOL_CALL per call, then COMPLETED or FAILED with the seed's
 * telemetry (or AWAITING_APPROVAL). Never throws for a run's failure; throws only when the store cannot record.
 */
export async function executeRunRequest(
  request: RunRequest,
  context: RunExecutionContext,
  options: RunExecutionOptions = {},
): Promise<RunExecutionOutcome> {
  const store = context.store.forTenant(request.tenantId);
  const lifecycle = createLifecycleRecorder(store, request, context);
  const record = await store.getRunRequest(request.runId);
  // A run whose lifecycle is over already (cancelled while queued, by another process) is not started.
  if (record !== null && settledRunEventTypes.includes(record.state)) {
    return { status: record.state === "COMPLETED" ? "completed" : "failed", result: null };
  }
  // A run cancelled while queued ends without running.
  if (record?.cancelRequestedAt != null) {
    await lifecycle.append("FAILED", cancelledData());
    await lifecycle.flush();
    return { status: "failed", result: null, recordedEnd: true };
  }
  if (request.agent !== autoAgentReference && !isAgentIdReference(request.agent)) {
    // Only registry agents run on a server: a path would let a caller run any file the server can read.
    const error = new CharterError(
      "AGENT_NOT_FOUND",
      `'${request.agent}' is not an agent id: a server runs the agents of its registry only (or auto)`,
      { details: { id: request.agent, reason: "not_an_id" } },
    );
    const result = preflightFailureResult(
      request.runId,
      error,
      context.environment.now(),
      lifecycle.redactor,
    );
    return lifecycle.finish(result, null);
  }
  // Stored already: another execution started it (a queue that handed it out twice); it is that execution's.
  if ((await store.getRun(request.runId)) !== null) return { status: "suspended", result: null };
  const prompt = request.prompt ?? canonicalJson(request.input ?? null);
  const history = [
    ...(request.conversationId === null
      ? []
      : await conversationHistory(store, request.conversationId, request.runId)),
    ...(request.messages ?? []),
  ];
  const tenant = await tenantLayer(context, request);
  if (tenant instanceof CharterError) {
    // The tenant's settings cannot be read here (a provider key sealed with another secrets key): nothing runs.
    const failed = preflightFailureResult(
      request.runId,
      tenant,
      context.environment.now(),
      lifecycle.redactor,
    );
    return lifecycle.finish(failed, null);
  }
  const { overlay, keySources } = tenant;
  const observed = observeRun(lifecycle, options, {}, keySources);
  const result = await runAgent({
    ...runnerOptions(context, request),
    agentPath: request.agent,
    prompt,
    ...(history.length > 0 ? { history } : {}),
    runId: request.runId,
    toolPermissions: {
      allowedClasses: (context.roleToolClasses ?? defaultRoleClasses)(request.role),
      preApprovedToolsAllowed: false,
    },
    ...(overlay != null ? { configurationOverlay: overlay } : {}),
    signal: observed.signal,
    ...observed.hooks,
  });
  return lifecycle.finish(result, observed.routing());
}

/**
 * Continues a stored run of the server: with a human's decisions on the calls it waits on, or taken over from a
 * process that is gone (or drained). The continuation records EXECUTING again (`resumed: true`), then as a new run
 * does; completed turns and tool calls are never run again (the durable resume).
 */
export async function continueRunRequest(
  request: RunRequest,
  continuation: RunContinuation,
  context: RunExecutionContext,
  options: RunExecutionOptions = {},
): Promise<RunExecutionOutcome> {
  const store = context.store.forTenant(request.tenantId);
  const lifecycle = createLifecycleRecorder(store, request, context);
  const tenant = await tenantLayer(context, request);
  if (tenant instanceof CharterError) {
    // The run stays as it stopped (awaiting its decision, or to be taken over) once the key is put right.
    await lifecycle.flush();
    throw tenant;
  }
  const { overlay, keySources } = tenant;
  const observed = observeRun(
    lifecycle,
    options,
    {
      resumed: true,
      ...(continuation.kind === "decision"
        ? {
            decided_by: continuation.decision.userId,
            decision_request_id: continuation.decision.requestId,
            approve: continuation.decision.approve,
            deny: continuation.decision.deny,
          }
        : { taken_over: true }),
    },
    keySources,
  );
  const base = runnerOptions(context, request);
  const result = await resumeStoredRun({
    runId: request.runId,
    tenantId: request.tenantId,
    runStore: context.store,
    agentCatalog: context.agentCatalog,
    environment: context.environment,
    ...(base.runsDirectory !== undefined ? { runsDirectory: base.runsDirectory } : {}),
    ...(base.homeDirectory !== undefined ? { homeDirectory: base.homeDirectory } : {}),
    ...(base.etcDirectory !== undefined ? { etcDirectory: base.etcDirectory } : {}),
    ...(base.binaryDirectory !== undefined ? { binaryDirectory: base.binaryDirectory } : {}),
    ...(base.processEnvironment !== undefined ? { processEnvironment: base.processEnvironment } : {}),
    ...(base.toolCallAdmission !== undefined ? { toolCallAdmission: base.toolCallAdmission } : {}),
    ...(base.toolCache !== undefined ? { toolCache: base.toolCache } : {}),
    ...(base.modelCallBudget !== undefined ? { modelCallBudget: base.modelCallBudget } : {}),
    signal: observed.signal,
    ...(continuation.kind === "decision"
      ? { approve: continuation.decision.approve, deny: continuation.decision.deny }
      : {}),
    ...(overlay != null ? { configurationOverlay: overlay } : {}),
    ...observed.hooks,
  });
  // A decision refused before the run was touched (it names no pending call): the run still waits, as it was.
  if (
    continuation.kind === "decision" &&
    !observed.started() &&
    (result.error?.code === "ARGUMENT_INVALID" || result.error?.code === "RUN_NOT_RESUMABLE")
  ) {
    return { status: "awaiting_approval", result };
  }
  return lifecycle.finish(result, observed.routing());
}

/** How long a server run's read-only tool results are served from the cache when nothing says otherwise. */
export const defaultToolCacheTtl = 90_000;

const defaultRoleClasses = (role: RunRequest["role"]) => defaultRoleToolClasses[role];

/**
 * The tenant's configuration layer and whose provider keys its runs use; the typed error when the tenant's
 * settings cannot be read (TENANT_SECRET_UNREADABLE), for the caller to fail the run with.
 */
async function tenantLayer(
  context: RunExecutionContext,
  request: RunRequest,
): Promise<
  | {
      readonly overlay:
        | Awaited<ReturnType<NonNullable<RunExecutionContext["tenantConfiguration"]>>>
        | undefined;
      readonly keySources: Readonly<Record<string, ProviderKeySource | null>> | undefined;
    }
  | CharterError
> {
  try {
    return {
      overlay: await context.tenantConfiguration?.(request.tenantId),
      keySources: await context.providerKeySources?.(request.tenantId),
    };
  } catch (error) {
    if (CharterError.isInstance(error) && error.code === "TENANT_SECRET_UNREADABLE") return error;
    throw error;
  }
}

function cancelledData(): Record<string, unknown> {
  return {
    cancelled: true,
    error: { code: "INTERRUPTED", class: null, message: "the run was cancelled" },
  };
}

// One configuration cache per execution context: its runs read the configuration files again only when one changed.
const configurationCaches = new WeakMap<RunExecutionContext, ConfigurationCache>();

function configurationCacheOf(context: RunExecutionContext): ConfigurationCache {
  if (context.configurationCache !== undefined) return context.configurationCache;
  let cache = configurationCaches.get(context);
  if (cache === undefined) {
    cache = createConfigurationCache();
    configurationCaches.set(context, cache);
  }
  return cache;
}

/** The options every server run shares: where it runs and for whom. */
function runnerOptions(
  context: RunExecutionContext,
  request: RunRequest,
): Omit<RunAgentOptions, "agentPath" | "prompt"> {
  const toolCallAdmission = createToolCallAdmission({
    store: context.store,
    environment: context.environment,
    limits: context.toolCallLimits,
    tenantId: request.tenantId,
    userId: request.userId,
  });
  return {
    ...(toolCallAdmission !== undefined ? { toolCallAdmission } : {}),
    // Every model call counts against the tenant's budgets, and is refused once one is spent.
    modelCallBudget: tenantModelCallBudget(context, request.tenantId),
    // Read-only results are shared by the runs of one tenant and role (what a role may call, and so see, differs).
    toolCache: {
      scope: `role:${request.role}`,
      defaultTtl:
        context.toolCacheDefaultTtl === undefined ? defaultToolCacheTtl : context.toolCacheDefaultTtl,
    },
    agentCatalog: context.agentCatalog,
    configurationCache: configurationCacheOf(context),
    runStore: context.store,
    tenantId: request.tenantId,
    correlationId: request.correlationId,
    environment: context.environment,
    cwd: context.cwd,
    ...(context.configPath !== undefined ? { configPath: context.configPath } : {}),
    ...(context.homeDirectory !== undefined ? { homeDirectory: context.homeDirectory } : {}),
    ...(context.etcDirectory !== undefined ? { etcDirectory: context.etcDirectory } : {}),
    ...(context.binaryDirectory !== undefined ? { binaryDirectory: context.binaryDirectory } : {}),
    ...(context.processEnvironment !== undefined ? { processEnvironment: context.processEnvironment } : {}),
    ...(context.runsDirectory !== undefined ? { runsDirectory: context.runsDirectory } : {}),
  };
}

interface LifecycleRecorder {
  /** The run's redactor once the runner has made it (its configuration's secrets), else the server's. */
  redactor: SecretRedactor;
  /** Appends an event after those already asked for, in order; failures surface at `flush`. */
  append(type: RunEventType, data: Readonly<Record<string, unknown>>): Promise<void>;
  flush(): Promise<void>;
  /** Records how the run ended or stopped, with its telemetry, and says so. */
  finish(result: AIAgentResult, routing: RunRouting | null): Promise<RunExecutionOutcome>;
}

function createLifecycleRecorder(
  store: RunStore,
  request: RunRequest,
  context: RunExecutionContext,
): LifecycleRecorder {
  let pending: Promise<void> = Promise.resolve();
  let failure: unknown = null;
  let settledElsewhere = false;
  const recorder: LifecycleRecorder = {
    redactor: context.redactor ?? new SecretRedactor(),
    append(type, data) {
      const redacted = recorder.redactor.redactValue(data) as Record<string, unknown>;
      pending = pending.then(async () => {
        if (failure !== null || settledElsewhere) return;
        try {
          await appendRequestEvent(store, request, context, type, redacted);
        } catch (error) {
          // The lifecycle was ended by someone else (a cancellation recorded while the run started): nothing more
          // of this execution is recorded, and that is not a failure.
          if (CharterError.isInstance(error) && error.details.reason === "run_not_running")
            settledElsewhere = true;
          else failure = error;
        }
      });
      return pending;
    },
    async flush() {
      await pending;
      if (failure !== null) throw failure;
    },
    async finish(result, routing) {
      const code = result.error?.code ?? null;
      if (code === "RUN_CONFLICT" || lostRaceReasons.has(result.error?.details?.reason)) {
        // Another process continues the run: its events are that process's to record.
        await recorder.flush();
        return { status: "suspended", result };
      }
      if (code === "APPROVAL_REQUIRED") {
        await recorder.append("AWAITING_APPROVAL", { pending_approvals: result.pendingApprovals ?? [] });
        await recorder.flush();
        return { status: "awaiting_approval", result };
      }
      const cancelled = (await store.getRunRequest(request.runId))?.cancelRequestedAt != null;
      if (result.outcome === "INTERRUPTED" && !cancelled) {
        // Stopped at a checkpoint without being cancelled (the process drains): the run is continued elsewhere.
        await recorder.flush();
        return { status: "suspended", result };
      }
      const telemetry = runTelemetry(result, routing, context.environment.now() - request.requestedAt);
      const ended = result.success ? "COMPLETED" : "FAILED";
      await recorder.append(ended, {
        outcome: result.outcome,
        ...telemetry,
        ...(result.error !== null
          ? {
              error: {
                code: result.error.code,
                class:
                  result.outcome === "INTERRUPTED" ? null : failureClassOf(result.error.code as ErrorCode),
                message: result.error.message,
              },
            }
          : { error: null }),
        ...(cancelled && result.outcome === "INTERRUPTED" ? { cancelled: true } : {}),
      });
      await recorder.flush();
      return { status: result.success ? "completed" : "failed", result, recordedEnd: true };
    },
  };
  return recorder;
}

/**
 * The runner's hooks that record the run's lifecycle as it goes: ROUTED once its agent, targets and contract are
 * known, EXECUTING at its first transition (the run is stored by then), a TOOL_CALL when each call ends (a call
 * that stops the run for an approval has not ended: AWAITING_APPROVAL names it).
 */
function observeRun(
  lifecycle: LifecycleRecorder,
  options: RunExecutionOptions,
  executing: Readonly<Record<string, unknown>> = {},
  keySources?: Readonly<Record<string, ProviderKeySource | null>>,
) {
  let routing: RunRouting | null = null;
  let started = false;
  // The run's own signal: aborted at once when asked to stop between tool calls, else once the calls under way end.
  const stop = new AbortController();
  let executingTools = false;
  let stopAsked = false;
  const askStop = () => {
    stopAsked = true;
    if (!executingTools) stop.abort();
  };
  if (options.signal?.aborted === true) askStop();
  else options.signal?.addEventListener("abort", askStop, { once: true });
  const startedCalls = new Map<
    string,
    { readonly name: string; readonly arguments: Readonly<Record<string, unknown>> }
  >();
  const hooks: Pick<RunAgentOptions, "onSecretRedactor" | "onRouted" | "onTransition" | "onEvent"> = {
    onSecretRedactor: (redactor) => {
      lifecycle.redactor = redactor;
      options.observer?.secretRedactor(redactor);
    },
    onRouted: (routed) => {
      routing = routed;
      options.observer?.routed(routed);
      const selection = routed.selection;
      void lifecycle.append("ROUTED", {
        agent: routed.agentId,
        intent:
          selection === null
            ? null
            : {
                intent: selection.selected,
                confidence:
                  selection.candidates.find((candidate) => candidate.agentId === selection.selected)
                    ?.confidence ?? null,
              },
        provider: routed.targets[0]?.provider ?? null,
        model: routed.targets[0]?.model ?? null,
        targets: routed.targets,
        contract_hash: routed.contractHash,
        // Whose key each target's provider uses (the tenant's, the server's, the environment's): never the key.
        ...(keySources !== undefined
          ? {
              provider_key_sources: Object.fromEntries(
                routed.targets.map((target) => [target.provider, keySources[target.provider] ?? null]),
              ),
            }
          : {}),
        ...(routed.resumed ? { resumed: true } : {}),
      });
    },
    onTransition: (_state, output) => {
      // The EXECUTE effect runs the turn's calls; the next transition comes once they have all ended.
      executingTools = output.effect.type === "execute_tools";
      if (stopAsked && !executingTools) stop.abort();
      if (started) return;
      started = true;
      void lifecycle.append("EXECUTING", executing);
      options.onExecuting?.();
    },
    onEvent: (event: CharterEvent) => {
      options.observer?.event(event);
      if (event.type === "tool_call_started") {
        startedCalls.set(`${event.turn}/${event.callId}`, { name: event.name, arguments: event.arguments });
        return;
      }
      if (event.type !== "tool_call_ended") return;
      // A call ends with its accounting entry, which names the source's own tool: the model's name is the started one.
      const key = `${event.turn}/${event.callId}`;
      const started = startedCalls.get(key);
      startedCalls.delete(key);
      const name = started?.name ?? event.name;
      // Charter's built-ins (handing in the report, reading a stored output) are not the run's tool calls.
      if (builtInTools.has(name)) return;
      void lifecycle.append("TOOL_CALL", {
        tool: name,
        call_id: event.callId,
        turn: event.turn,
        args: started?.arguments ?? {},
        status: event.status,
        error_code: event.errorCode,
        error_class: event.errorCode === null ? null : failureClassOf(event.errorCode as ErrorCode),
        latency_ms: event.latencyMs,
      });
    },
  };
  return { hooks, signal: stop.signal, routing: () => routing, started: () => started };
}
