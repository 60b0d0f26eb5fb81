import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { AbilityLibrary } from "../abilities/ability.js";
import type { AgentAbilities } from "../abilities/agent-abilities.js";
import { loadAbilityLibrary } from "../abilities/load-ability-library.js";
import { resolveAgentAbilities } from "../abilities/resolve-agent-abilities.js";
import { type AgentDefinition as AgentFile, loadAgentFile } from "../config/agent-file.js";
import { isAgentIdReference } from "../config/agent-reference.js";
import type { AgentSettings } from "../config/agent-settings-schema.js";
import {
  type LoadConfigurationOptions,
  type LoadedConfiguration,
  loadConfiguration as loadConfigurationFiles,
} from "../config/load-configuration.js";
import { parseSetOverrides } from "../config/parse-set-overrides.js";
import { findModelPricing } from "../config/pricing-configuration-schema.js";
import { resolveModelTargets, selectModelReferences } from "../config/resolve-model-targets.js";
import type { AgentSelectionRecord } from "../contract/agent-selection-record.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import { CharterError } from "../foundation/charter-error.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import { SecretRedactor } from "../foundation/secret-redactor.js";
import { createModelClient } from "../model/providers/create-model-client.js";
import type { AIAgentResult } from "../session/agent-result.js";
import { openRunStore } from "../store/open-run-store.js";
import type { RunStore } from "../store/run-store.js";
import { createStoreTranscriptWriter } from "../store/store-transcript-writer.js";
import type { McpElicitationRequest } from "../tools/sources/mcp-client-features.js";
import type { RegisteredTool, ToolSource } from "../tools/tool-definition.js";
import { processToolQueues } from "../tools/tool-queues.js";
import { createJsonlTranscriptWriter } from "../transcript/jsonl-transcript-writer.js";
import { createTeeTranscriptWriter } from "../transcript/tee-transcript-writer.js";
import {
  type AgentCatalog,
  type AgentLookup,
  type AgentSelection,
  autoAgentReference,
} from "./agent-catalog.js";
import { checkCorrelationId } from "./check-correlation-id.js";
import { configureToolIdempotency } from "./configure-tool-idempotency.js";
import { withCorrelationHeader } from "./correlation-fetch.js";
import { createExtractionRunner } from "./create-extraction-runner.js";
import { createSamplingRunner } from "./create-sampling-runner.js";
import { createDelegateTool } from "./delegate-tool.js";
import { type DelegationTrace, defaultMaxDelegationDepth, rootDelegationTrace } from "./delegation-trace.js";
import { createDurableRunHooks, type RunInvocation } from "./durable-run-hooks.js";
import { guardToolCalls } from "./guard-tool-calls.js";
import { preflightFailureResult } from "./preflight-failure-result.js";
import { prepareAgent } from "./prepare-agent.js";
import { readAttachmentData } from "./read-attachment-data.js";
import { readPendingApprovals } from "./read-pending-approvals.js";
import type { ResumeRequest, RunAgentOptions } from "./run-agent-options.js";
import { currentRunOwner, defaultHeartbeatIntervalMilliseconds } from "./run-owner.js";
import { selectRunStore } from "./select-run-store.js";
import { startToolSources } from "./start-tool-sources.js";
import { storePreflightFailure } from "./store-preflight-failure.js";
import { createStoreToolResultCache, toolCacheTtl } from "./store-tool-result-cache.js";
import { createSubAgentTool } from "./sub-agent-tool.js";
import { admitToolCalls } from "./tool-call-admission.js";
import { restrictToolClasses } from "./tool-permissions.js";
import { createTracingFetch } from "./tracing-fetch.js";

export type { ResumeRequest, RunAgentOptions, RunRouting } from "./run-agent-options.js";

interface RunContext {
  readonly options: RunAgentOptions;
  readonly catalog: AgentCatalog | null;
  readonly environment: RuntimeEnvironment;
  readonly cwd: string;
  readonly runsDirectory: string;
  readonly loaded: LoadedConfiguration;
  readonly overrides: AgentSettings;
  readonly redactor: SecretRedactor;
  readonly store: RunStore;
  readonly invocation: RunInvocation;
  readonly resume: ResumeRequest | null;
  /** The abilities folder's contents, read once per run tree and only when an agent names an ability. */
  readonly abilityLibrary: () => Promise<AbilityLibrary>;
}

/**
 * Runs one agent file end to end: loads it and the layered configuration, starts its MCP servers, offers its
 * sub-agents as tools, and runs it with a JSONL transcript in the run directory. Always returns an
 * AIAgentResult: failures before the session starts are FAILED_PREFLIGHT results whose error code says what
 * was wrong (and picks the exit code).
 */
export async function runAgent(options: RunAgentOptions): Promise<AIAgentResult> {
  return runAgentFile(options, null);
}

/** `runAgent`, or (with `resume`) the continuation of a stored run under the same run id. */
export async function runAgentFile(
  options: RunAgentOptions,
  resume: (ResumeRequest & { readonly runId: string }) | null,
): Promise<AIAgentResult> {
  const environment = options.environment ?? systemEnvironment;
  const cwd = options.cwd ?? process.cwd();
  const home = options.homeDirectory ?? homedir();
  const runId = resume?.runId ?? options.runId ?? environment.newId("run");
  let store: RunStore | null = null;
  // Created as soon as the configuration is loaded, so that a failure after it (opening the store, say) is redacted.
  const redactor = new SecretRedactor();
  try {
    checkCorrelationId(options.correlationId);
    const configurationOptions: LoadConfigurationOptions = {
      ...(options.configPath !== undefined ? { configPath: resolve(cwd, options.configPath) } : {}),
      cwd,
      homeDirectory: home,
      ...(options.etcDirectory !== undefined ? { etcDirectory: options.etcDirectory } : {}),
      ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
      ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
      ...(options.configurationOverlay !== undefined ? { overlay: options.configurationOverlay } : {}),
    };
    const { agent, loaded, selection } = await loadTopLevelAgent(
      options,
      configurationOptions,
      cwd,
      resume?.agentSelection ?? null,
    );
    // What resume starts again from: the agent file, or the id of a built-in agent (which has no file).
    const agentPath = agent.builtIn ? agent.id : agent.path;
    for (const secret of loaded.secrets) redactor.addSecret(secret.value, secret.label);
    options.onSecretRedactor?.(redactor);
    // Every query of the run (and of its sub-agents) is scoped by its tenant. A view of a given store is left open.
    store =
      options.runStore !== undefined
        ? options.runStore.forTenant(options.tenantId ?? null)
        : await openRunStore({
            tenantId: options.tenantId ?? null,
            ...(await selectRunStore({
              store: options.store,
              configured: loaded.configuration.store,
              homeDirectory: home,
              ...(options.processEnvironment !== undefined
                ? { processEnvironment: options.processEnvironment }
                : {}),
            })),
            environment,
          });
    const context: RunContext = {
      options,
      catalog: options.agentCatalog ?? null,
      environment,
      cwd,
      runsDirectory: options.runsDirectory ?? join(home, ".charter", "runs"),
      loaded,
      overrides: parseSetOverrides(options.set ?? []),
      redactor,
      store,
      invocation: {
        agent_path: agentPath,
        config_path: options.configPath !== undefined ? resolve(cwd, options.configPath) : null,
        cwd,
        set: options.set ?? [],
        ...(selection !== null ? { agent_selection: selection } : {}),
        ...(options.toolPermissions !== undefined
          ? {
              tool_permissions: {
                allowed_classes: options.toolPermissions.allowedClasses,
                pre_approved_tools_allowed: options.toolPermissions.preApprovedToolsAllowed,
              },
            }
          : {}),
        ...(options.history !== undefined && options.history.length > 0
          ? { history_messages: options.history.length }
          : {}),
      },
      resume,
      abilityLibrary: once(() =>
        // Relative only when no configuration file set it: then it is read from the working directory.
        loadAbilityLibrary(resolve(cwd, loaded.configuration.abilitiesDir)),
      ),
    };
    const maxDepth =
      context.overrides.maxDepth ?? agent.settings.maxDepth ?? loaded.configuration.defaults.maxDepth;
    const trace = rootDelegationTrace(agent.id, maxDepth ?? defaultMaxDelegationDepth);
    return await runLoadedAgent(
      context,
      agent,
      options.prompt,
      trace,
      runId,
      options.signal,
      true,
      options.parentRunId ?? null,
      selection,
    );
  } catch (error) {
    return preflightFailureResult(runId, error, environment.now(), redactor);
  } finally {
    await store?.close();
  }
}

/** Runs one loaded agent (the top-level one, or a sub-agent for a tool call); never throws. */
async function runLoadedAgent(
  context: RunContext,
  agent: AgentFile,
  prompt: string,
  trace: DelegationTrace,
  runId: string,
  signal: AbortSignal | undefined,
  topLevel: boolean,
  parentRunId: string | null,
  /** How a selector chose this agent (`auto`, `delegate`), recorded in its contract; null when it was named. */
  selection: AgentSelectionRecord | null,
): Promise<AIAgentResult> {
  const { environment, loaded, redactor } = context;
  const configuration = loaded.configuration;
  const defaults = configuration.defaults;
  // Command-line overrides apply to the top-level agent only; a sub-agent runs under its own file's settings.
  const overrides = topLevel ? context.overrides : {};
  const sources: ToolSource[] = [];
  // Known once resolved: a run that fails before its session starts is stored under the contract known by then.
  let targets: ReturnType<typeof resolveModelTargets> | null = null;
  let preparedContract: ExecutionContract | null = null;
  let abilities: AgentAbilities | null = null;
  let sessionStarted = false;
  let heartbeat: ReturnType<typeof setInterval> | null = null;
  try {
    // First: an ability the agent names that does not exist stops the run before anything starts or is stored.
    abilities = await abilitiesOf(context, agent, overrides);
    targets = resolveModelTargets(selectModelReferences(overrides, agent.settings, defaults), configuration);
    const toolReferences = overrides.tools ?? agent.settings.tools ?? defaults.tools ?? [];
    const traceModelHttp = context.options.traceModelHttp;
    const correlationId = context.options.correlationId;
    const models = targets.map((target) => {
      const traced =
        traceModelHttp === undefined
          ? undefined
          : createTracingFetch(`${target.provider}/${target.model}`, traceModelHttp, redactor);
      // The correlation id goes to the model endpoints too (outside the trace, so that the trace shows it).
      const fetch = correlationId === undefined ? traced : withCorrelationHeader(correlationId, traced);
      return createModelClient(target, { environment, ...(fetch === undefined ? {} : { fetch }) });
    });
    const traceMcp = context.options.traceMcp;
    const started = await startToolSources(toolReferences, configuration, {
      cwd: context.cwd,
      environment,
      // Sub-agents run under the same options: their tools get the same correlation id as the top-level run's.
      ...(correlationId === undefined ? {} : { correlationId }),
      sampling: createSamplingRunner({ targets, models, environment, redactor, callPath: trace.callPath }),
      // A server's question stops the top-level run for a human answer (`charter resume --answer`); a sub-agent
      // has no one to ask, so its servers are not offered elicitation.
      ...(topLevel
        ? {
            elicitation: (request: McpElicitationRequest) =>
              context.resume?.answers?.get(request.callId) ?? null,
          }
        : {}),
      ...(traceMcp === undefined
        ? {}
        : {
            traceMcp: (server: string, direction: "send" | "receive", message: unknown) =>
              traceMcp(
                redactor.redactString(
                  `[mcp ${server}] ${direction === "send" ? ">>" : "<<"} ${JSON.stringify(redactor.redactValue(message))}`,
                ),
              ),
          }),
    });
    sources.push(...started.sources);

    // Sub-agents: files listed under `agents` (relative to the listing file) or registry ids, each loaded (and
    // validated) now.
    let contractHash: string | null = null;
    const subAgents: RegisteredTool[] = [];
    for (const reference of agent.settings.agents ?? []) {
      const child = isAgentIdReference(reference)
        ? await resolveAgentId(context.catalog, reference, { configuration, cwd: context.cwd })
        : await loadAgentFile(resolve(agent.directory, reference));
      // A sub-agent's abilities are checked now, with its file, not when it is first called.
      await abilitiesOf(context, child, {});
      subAgents.push(
        createSubAgentTool({
          child,
          trace,
          parentContractHash: () => contractHash,
          runChild: (childAgent, childPrompt, childTrace, childSignal) =>
            runLoadedAgent(
              context,
              childAgent,
              childPrompt,
              childTrace,
              environment.newId("run"),
              childSignal,
              false,
              runId,
              null,
            ),
        }),
      );
    }
    // `delegation: auto`: the delegate tool, which hands a sub-task to the agent the registry's selector picks.
    if (agent.profile.delegation === "auto") {
      const catalog = context.catalog;
      if (catalog === null) {
        throw new CharterError(
          "AGENT_NOT_FOUND",
          `agent ${agent.id} has delegation: auto, which selects agents from the registry, and no agent registry was given (pass agentCatalog)`,
          { details: { id: agent.id, key: "delegation", reason: "no_registry" } },
        );
      }
      subAgents.push(
        createDelegateTool({
          trace,
          parentContractHash: () => contractHash,
          select: (task, exclude) => catalog.select(task, { configuration, cwd: context.cwd }, exclude),
          runChild: (child, task, childTrace, childSignal, childSelection) =>
            runLoadedAgent(
              context,
              child,
              task,
              childTrace,
              environment.newId("run"),
              childSignal,
              false,
              runId,
              childSelection,
            ),
        }),
      );
    }

    // Each key with the precedence of every setting: `--set`, else the agent file's list, else the configuration
    // defaults'. They decide approvals and repeats, so an override must never be accepted and then ignored.
    const idempotencySettings = {
      readOnlyTools: overrides.readOnlyTools ?? agent.settings.readOnlyTools ?? defaults.readOnlyTools ?? [],
      idempotentTools:
        overrides.idempotentTools ?? agent.settings.idempotentTools ?? defaults.idempotentTools ?? [],
      destructiveTools:
        overrides.destructiveTools ?? agent.settings.destructiveTools ?? defaults.destructiveTools ?? [],
    };
    const prepared = prepareAgent({
      agent: { id: agent.id, systemPrompt: agent.systemPrompt, settings: agent.settings },
      configurationDefaults: defaults,
      overrides,
      targets,
      models,
      pricing: targets.map(
        (target) => findModelPricing(configuration.pricing, target.provider, target.model) ?? null,
      ),
      tools: configureToolIdempotency(
        [...started.tools, ...subAgents, ...(topLevel ? (context.options.extraTools ?? []) : [])],
        idempotencySettings,
      ),
      parentContractHash: trace.parentContractHash,
      environment,
      redactor,
      trace: { callPath: trace.callPath, parentTxnId: trace.parentTxnId, originTxnId: trace.originTxnId },
      abilities,
      // A resumed run's contract is built as the one it recorded was, under that contract's versions.
      ...(topLevel && context.resume !== null ? { recordedContract: context.resume.contractVersion } : {}),
      ...(selection !== null ? { agentSelection: selection } : {}),
      queues: processToolQueues(configuration.queues),
      ...(context.options.modelCallBudget !== undefined
        ? { modelCallBudget: context.options.modelCallBudget }
        : {}),
      ...(Object.keys(configuration.toolCache).length > 0 || context.options.toolCache !== undefined
        ? {
            toolCache: {
              cache: createStoreToolResultCache(context.store, {
                configuration,
                cwd: context.cwd,
                tenantId: context.options.tenantId ?? null,
                scope: context.options.toolCache?.scope ?? null,
                redactor,
              }),
              ttlFor: toolCacheTtl(configuration, context.options.toolCache?.defaultTtl ?? null),
            },
          }
        : {}),
      extract: createExtractionRunner({ targets, models, environment, redactor, callPath: trace.callPath }),
    });
    // The contract of this run's prompt: its abilities are chosen for it, before any inference.
    const runContract = prepared.contractFor(prompt);
    contractHash = runContract.contract_hash;
    preparedContract = runContract;
    const abilitiesCut = runContract.decisions.abilities_cut;
    if (abilitiesCut !== undefined) {
      context.options.onWarning?.(
        `agent ${agent.id}: abilities cut to fit abilityTokenBudget (${abilitiesCut}); raise abilityTokenBudget to keep them whole`,
      );
    }
    // Preflight: every entry of `tools` must name something that exists (issue 2), never silently nothing.
    const offered = new Set(prepared.contract.tool_manifest.map((tool) => tool.name));
    const denied = started.denied.find(({ reference }) => !offered.has(reference));
    if (denied !== undefined) {
      const definition = configuration.mcpServers[denied.server];
      throw new CharterError(
        "TOOL_REFERENCE_DENIED",
        `'${denied.reference}' in the agent's tools is excluded by the toolsAllowed/toolsDenied of MCP server '${denied.server}': remove it from tools or from the server's filter`,
        {
          details: {
            key: "tools",
            reference: denied.reference,
            server: denied.server,
            agent: agent.id,
            toolsAllowed: definition?.toolsAllowed ?? null,
            toolsDenied: definition?.toolsDenied ?? null,
          },
        },
      );
    }
    const unknown = started.unmatched.find((reference) => !offered.has(reference));
    if (unknown !== undefined) {
      throw new CharterError(
        "TOOL_REFERENCE_UNKNOWN",
        `'${unknown}' in the agent's tools names no MCP server, REST tool or tool`,
        { details: { key: "tools", reference: unknown, agent: agent.id } },
      );
    }
    const resume = topLevel ? context.resume : null;
    if (resume !== null && resume.checkpoint.state.runId !== runId) {
      throw new CharterError("RUN_NOT_RESUMABLE", "the checkpoint belongs to another run", {
        details: { runId },
      });
    }
    if (resume !== null && resume.contractHash !== runContract.contract_hash) {
      // Same contract hash or nothing: the agent file, configuration or overrides changed since the run started.
      throw new CharterError(
        "RUN_NOT_RESUMABLE",
        "the agent and configuration no longer give the run's contract",
        {
          details: { runId, expected: resume.contractHash, actual: runContract.contract_hash },
        },
      );
    }
    if (topLevel) {
      context.options.onRouted?.({
        runId,
        agentId: agent.id,
        targets: targets.map((target) => ({ provider: target.provider, model: target.model })),
        contractHash: runContract.contract_hash,
        selection,
        resumed: resume !== null,
      });
    }
    // Reopened only now, once the agent, configuration, tool servers and contract hash have all passed: a resume
    // refused before its session starts leaves the run as it was (awaiting its approval, say).
    if (resume !== null) await reopenForResume(context.store, runId, resume);
    const runDirectory = join(context.runsDirectory, runId);
    const storeWriter = createStoreTranscriptWriter({
      store: context.store,
      agentId: agent.id,
      tenantId: context.options.tenantId ?? null,
      correlationId: context.options.correlationId ?? null,
      parentRunId,
      owner: currentRunOwner(),
      mode: resume === null ? "create" : "resume",
    });
    const durable = createDurableRunHooks({
      store: context.store,
      writer: storeWriter,
      runId,
      invocation: context.invocation,
      redactor,
      tools: {
        manifest: prepared.contract.tool_manifest,
        destructiveTools: idempotencySettings.destructiveTools,
      },
      ...(resume !== null
        ? { resumedFrom: resume.checkpoint, storedResults: resume.completed.map((call) => call.result) }
        : {}),
    });
    const permissions = context.options.toolPermissions;
    const guard = {
      manifest: prepared.contract.tool_manifest,
      destructiveTools: idempotencySettings.destructiveTools,
      // A run whose permissions exclude pre-approvals waits for a human's decision on every destructive call.
      preApprovedTools:
        permissions !== undefined && !permissions.preApprovedToolsAllowed
          ? []
          : (overrides.approvedTools ?? agent.settings.approvedTools ?? defaults.approvedTools ?? []),
      ...(resume !== null
        ? {
            decisions: resume.decisions,
            completed: resume.completed,
            possiblyInFlight: resume.possiblyInFlight,
          }
        : {}),
    };
    sessionStarted = true;
    // Who runs the run says it is alive on a timer (never per turn): `runs list` tells a run whose process is
    // gone from one still running by its owner, and by this heartbeat when the owner is on another host.
    const owner = currentRunOwner();
    heartbeat = setInterval(
      () => void context.store.heartbeatRun(runId, owner).catch(() => undefined),
      environment.heartbeatIntervalMilliseconds ?? defaultHeartbeatIntervalMilliseconds,
    );
    heartbeat.unref();
    const history = topLevel && resume === null ? (context.options.history ?? []) : [];
    const { result } = await prepared.run({
      prompt,
      ...(history.length > 0 ? { history } : {}),
      runId,
      // A resumed run continues in the store only: its run directory holds the run as first written.
      transcriptWriter:
        resume === null
          ? createTeeTranscriptWriter([createJsonlTranscriptWriter(runDirectory), storeWriter])
          : storeWriter,
      checkpoint: durable.checkpoint,
      // Recorded in PRECHECK: who the run is for, and that its stored records are bound to its chain.
      runIdentity: {
        tenant_id: context.options.tenantId ?? null,
        correlation_id: context.options.correlationId ?? null,
        bound_records: 1,
      },
      // The durable layer outside the guard: the guard's own answers are stored like any result.
      // A call the run's permissions exclude is refused before it could ask for an approval.
      wrapToolExecutor: (unadmitted) => {
        // A call that would run is admitted last (after its permission and approval), so only calls that run count.
        const admission = context.options.toolCallAdmission;
        const executor =
          admission === undefined
            ? unadmitted
            : admitToolCalls(unadmitted, {
                manifest: guard.manifest,
                destructiveTools: guard.destructiveTools,
                admission,
              });
        return durable.wrapToolExecutor(
          permissions === undefined
            ? guardToolCalls(executor, guard)
            : restrictToolClasses(guardToolCalls(executor, guard), {
                manifest: guard.manifest,
                destructiveTools: guard.destructiveTools,
                allowedClasses: permissions.allowedClasses,
              }),
        );
      },
      beforeClose: durable.finish,
      ...(resume !== null
        ? {
            resume: {
              checkpoint: resume.checkpoint,
              transcriptCreatedAt: resume.transcriptCreatedAt,
              continueFrom: resume.continueFrom,
              attachmentData: await readAttachmentData(context.store, runId, resume.checkpoint),
            },
          }
        : {}),
      ...(signal !== undefined ? { signal } : {}),
      ...(topLevel && context.options.onTransition !== undefined
        ? { onTransition: context.options.onTransition }
        : {}),
      ...(topLevel && context.options.onEvent !== undefined ? { onEvent: context.options.onEvent } : {}),
    });
    return {
      ...result,
      transcript: { ...result.transcript, directory: resume === null ? runDirectory : null },
      ...(topLevel && result.error?.code === "APPROVAL_REQUIRED"
        ? { pendingApprovals: await readPendingApprovals(context.store, runId) }
        : {}),
    };
  } catch (error) {
    const failure = preflightFailureResult(runId, error, environment.now(), redactor);
    // A new top-level run that failed before its session started is stored all the same (FAILED_PREFLIGHT, with
    // its PRECHECK entry), so that `runs list` and `verify` show it; a refused resume leaves its run as it was.
    if (!topLevel || context.resume !== null || sessionStarted || targets === null) return failure;
    try {
      const resolvedTargets = targets;
      const contract =
        preparedContract ??
        prepareAgent({
          agent: { id: agent.id, systemPrompt: agent.systemPrompt, settings: agent.settings },
          configurationDefaults: defaults,
          overrides,
          targets: resolvedTargets,
          models: resolvedTargets.map((target) => createModelClient(target, { environment })),
          tools: [],
          abilities,
          ...(selection !== null ? { agentSelection: selection } : {}),
          parentContractHash: trace.parentContractHash,
          environment,
          redactor,
        }).contractFor(prompt);
      return await storePreflightFailure({
        store: context.store,
        runId,
        agentId: agent.id,
        contract,
        systemPrompt: contract.system_prompt,
        prompt,
        tenantId: context.options.tenantId ?? null,
        correlationId: context.options.correlationId ?? null,
        parentRunId,
        runDirectory: join(context.runsDirectory, runId),
        environment,
        redactor,
        failure,
      });
    } catch {
      // Storing the failure failed too (a store that cannot be written): the failure is still the result.
      return failure;
    }
  } finally {
    if (heartbeat !== null) clearInterval(heartbeat);
    await Promise.allSettled(sources.map((source) => source.close()));
  }
}

/** The abilities an agent names, resolved against the run's abilities folder (null when it names none). */
function abilitiesOf(
  context: RunContext,
  agent: AgentFile,
  overrides: AgentSettings,
): Promise<AgentAbilities | null> {
  return resolveAgentAbilities({
    agentFile: agent.path,
    layers: { overrides, agent: agent.settings, defaults: context.loaded.configuration.defaults },
    loadLibrary: context.abilityLibrary,
  });
}

/** A function that calls `load` the first time only, and returns that first promise ever after. */
function once<Value>(load: () => Promise<Value>): () => Promise<Value> {
  let loaded: Promise<Value> | null = null;
  return () => {
    loaded ??= load();
    return loaded;
  };
}

/**
 * The agent to run and the configuration it runs under. A file's directory is configuration layer 3; an id is
 * looked up with the configuration found without that layer (its `agentsDir`), and then, for an agent with a
 * file, the configuration is loaded again with the file's directory as layer 3, as for a path.
 */
async function loadTopLevelAgent(
  options: RunAgentOptions,
  configurationOptions: LoadConfigurationOptions,
  cwd: string,
  recordedSelection: AgentSelectionRecord | null,
): Promise<{ agent: AgentFile; loaded: LoadedConfiguration; selection: AgentSelectionRecord | null }> {
  const loadConfiguration = options.configurationCache?.load ?? loadConfigurationFiles;
  if (!isAgentIdReference(options.agentPath)) {
    const agent = await loadAgentFile(resolve(cwd, options.agentPath));
    return {
      agent,
      loaded: await loadConfiguration({ ...configurationOptions, promptDirectory: agent.directory }),
      selection: recordedSelection,
    };
  }
  const base = await loadConfiguration(configurationOptions);
  const lookup = { configuration: base.configuration, cwd };
  let agent: AgentFile;
  let selection = recordedSelection;
  if (options.agentPath === autoAgentReference) {
    const selected = await selectAgent(options.agentCatalog ?? null, options.prompt, lookup);
    agent = selected.agent;
    selection = selected.record;
    options.onAgentSelection?.(selection);
  } else {
    agent = await resolveAgentId(options.agentCatalog ?? null, options.agentPath, lookup);
  }
  if (agent.builtIn) return { agent, loaded: base, selection };
  return {
    agent,
    loaded: await loadConfiguration({ ...configurationOptions, promptDirectory: agent.directory }),
    selection,
  };
}

async function selectAgent(
  catalog: AgentCatalog | null,
  task: string,
  lookup: AgentLookup,
): Promise<AgentSelection> {
  if (catalog === null) {
    throw new CharterError(
      "AGENT_NOT_FOUND",
      "'auto' selects an agent from the registry, and no agent registry was given (pass agentCatalog)",
      { details: { id: autoAgentReference, reason: "no_registry" } },
    );
  }
  const selected = await catalog.select(task, lookup);
  if (selected === null) {
    throw new CharterError("AGENT_NOT_FOUND", "no agent of the registry can take this task", {
      details: { id: autoAgentReference, reason: "nothing_selected" },
    });
  }
  return selected;
}

function resolveAgentId(
  catalog: AgentCatalog | null,
  id: string,
  lookup: Parameters<AgentCatalog["resolve"]>[1],
): Promise<AgentFile> {
  if (catalog === null) {
    throw new CharterError(
      "AGENT_NOT_FOUND",
      `'${id}' is an agent id, and no agent registry was given to look it up (pass agentCatalog, or name the file: ./${id}.md)`,
      { details: { id, reason: "no_registry" } },
    );
  }
  return catalog.resolve(id, lookup);
}

/**
 * Reopens the run a resume read, only if it is still as read (same status, same chain end): of two resumes of one
 * run, the one that gets there second changes nothing and is refused with RUN_NOT_RESUMABLE.
 */
async function reopenForResume(store: RunStore, runId: string, resume: ResumeRequest): Promise<void> {
  try {
    await store.reopenRun(runId, {
      from: [resume.status],
      expected: resume.continueFrom,
      owner: currentRunOwner(),
    });
  } catch (error) {
    const reason = CharterError.isInstance(error) ? error.details.reason : undefined;
    if (reason !== "chain_mismatch" && reason !== "status_not_allowed") throw error;
    throw new CharterError(
      "RUN_NOT_RESUMABLE",
      `run ${runId} changed while this resume was starting (another resume continued it)`,
      { details: { runId, reason: "concurrent_resume" }, cause: error },
    );
  }
}
