import { type ContractSchemaVersion, executionContractSchema } from "../contract/execution-contract.js";
import { CharterError } from "../foundation/charter-error.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import { supportedAdapterVersions } from "../model/protocol-adapter.js";
import type { AIAgentResult } from "../session/agent-result.js";
import type { CharterEvent } from "../session/charter-event.js";
import type { SessionCheckpoint } from "../session/session-checkpoint.js";
import { openRunStore } from "../store/open-run-store.js";
import type { RunStatus } from "../store/run-record.js";
import type { McpElicitationAnswer } from "../tools/sources/mcp-client-features.js";
import { assertRunUntampered } from "./assert-run-untampered.js";
import type { RunInvocation } from "./durable-run-hooks.js";
import { loadSessionCheckpoint } from "./load-session-checkpoint.js";
import { parseElicitationAnswers } from "./parse-elicitation-answers.js";
import type { ConversationHistoryMessage } from "./prepare-agent.js";
import { readPendingApprovals } from "./read-pending-approvals.js";
import { type ResumedToolCalls, resumedToolCalls } from "./resumed-tool-calls.js";
import { type RunAgentOptions, runAgentFile } from "./run-agent.js";
import { selectRunStore } from "./select-run-store.js";

export interface ResumeStoredRunOptions
  extends Pick<
    RunAgentOptions,
    | "onTransition"
    | "onSecretRedactor"
    | "traceModelHttp"
    | "traceMcp"
    | "onWarning"
    | "agentCatalog"
    | "configurationOverlay"
    | "runStore"
    | "onRouted"
    | "toolCallAdmission"
    | "toolCache"
    | "modelCallBudget"
    | "extraTools"
  > {
  readonly runId: string;
  /** `--approve <call-id>`: pending destructive calls to run (each call the run waits on, in its turn, once). */
  readonly approve?: readonly string[];
  /**
   * `--deny <call-id>`: pending destructive calls the model is told were refused. Naming a call the run does not
   * wait on throws ARGUMENT_INVALID and leaves the run as it was.
   */
  readonly deny?: readonly string[];
  /**
   * `--answer [CALL-ID=]ANSWER`: answers to the questions a tool's server asked (MCP elicitation); the call is run
   * again and its server's question answered with them. See `parseElicitationAnswers`.
   */
  readonly answer?: readonly string[];
  /** The run store; default as for `runAgent`, from the configuration found from `cwd` (and `configPath`). */
  readonly store?: string;
  /**
   * `--tenant`: the tenant whose run it is (absent: the default tenant, the runs stored without one). Another
   * tenant's run is not found (RUN_NOT_FOUND), as in every read of the store.
   */
  readonly tenantId?: string;
  /**
   * `--config FILE`: a configuration layer read only to find the run store (the run continues under the
   * configuration it was started with).
   */
  readonly configPath?: string;
  /** Where the configuration layers that name the run store are looked for; default `process.cwd()`. */
  readonly cwd?: string;
  readonly etcDirectory?: string;
  readonly runsDirectory?: string;
  readonly homeDirectory?: string;
  /** The directory of the `charter` command (configuration layer 4), as for the run itself. */
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  readonly environment?: RuntimeEnvironment;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: CharterEvent) => void;
}

const resumable = ["running", "interrupted", "awaiting_approval"] as const;

/**
 * `charter resume <run-id>` (seed 003 INV-CP-002): continues a run that was interrupted, is waiting for an
 * approval, or whose process died, from the step after its last checkpoint, under the same contract hash.
 * Committed steps are never executed again; a call that may have been in flight is re-run only when it is
 * read-only or idempotent.
 */
export async function resumeStoredRun(options: ResumeStoredRunOptions): Promise<AIAgentResult> {
  const environment = options.environment ?? systemEnvironment;
  // The continuation is stored where the run was found, whatever the run's own configuration says now.
  const location =
    options.runStore !== undefined
      ? null
      : await selectRunStore({
          store: options.store,
          ...(options.configPath !== undefined ? { configPath: options.configPath } : {}),
          ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
          ...(options.homeDirectory !== undefined ? { homeDirectory: options.homeDirectory } : {}),
          ...(options.etcDirectory !== undefined ? { etcDirectory: options.etcDirectory } : {}),
          ...(options.processEnvironment !== undefined
            ? { processEnvironment: options.processEnvironment }
            : {}),
          ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
        });
  // A given store's tenant view is left open (closing a view does nothing); one opened here is closed below.
  const store =
    options.runStore !== undefined
      ? options.runStore.forTenant(options.tenantId ?? null)
      : await openRunStore({ ...(location ?? {}), environment, tenantId: options.tenantId ?? null });
  let answers = new Map<string, McpElicitationAnswer>();
  let prepared: {
    invocation: RunInvocation;
    /** The task the run was started with, as recorded (redacted): abilities are chosen for it again. */
    prompt: string;
    /** The earlier conversation the run continued (a server's conversation), as its checkpoint holds it. */
    history: ConversationHistoryMessage[];
    checkpoint: SessionCheckpoint;
    transcriptCreatedAt: string;
    continueFrom: { entryCount: number; headHash: string };
    contractHash: string;
    contractVersion: { schemaVersion: ContractSchemaVersion; adapterVersion: string };
    status: RunStatus;
    tenantId: string | null;
    correlationId: string | null;
  } & ResumedToolCalls;
  try {
    const run = await store.getRun(options.runId);
    if (run === null)
      throw new CharterError("RUN_NOT_FOUND", `no run ${options.runId} in ${store.location}`, {
        details: { runId: options.runId },
      });
    if (run.kind === "workflow") {
      throw new CharterError(
        "RUN_NOT_RESUMABLE",
        `run ${options.runId} is a workflow run: continue it with charter workflow resume ${options.runId}`,
        { details: { runId: options.runId, reason: "workflow_run" } },
      );
    }
    if (!(resumable as readonly string[]).includes(run.status)) {
      throw new CharterError(
        "RUN_NOT_RESUMABLE",
        `run ${options.runId} is ${run.status}: only ${resumable.join(", ")} runs resume`,
        {
          details: { runId: options.runId, status: run.status },
        },
      );
    }
    // Nothing of a run that does not verify is acted on: its checkpoint or stored results may be forged.
    await assertRunUntampered(store, options.runId);
    const document = await loadSessionCheckpoint(store, options.runId);
    if (document === null) {
      throw new CharterError(
        "RUN_NOT_RESUMABLE",
        `run ${options.runId} has no checkpoint yet (it stopped before its first COMMIT)`,
        {
          details: { runId: options.runId },
        },
      );
    }
    if (document.invocation === undefined || document.invocation === null) {
      // A run started through the library records no agent file to start again from: the CLI cannot rebuild it.
      throw new CharterError(
        "RUN_NOT_RESUMABLE",
        `run ${options.runId} was not started by \`charter run\`: it records no agent file to resume from`,
        { details: { runId: options.runId, reason: "no_invocation" } },
      );
    }
    const awaitingApproval = run.status === "awaiting_approval";
    const pending = awaitingApproval ? await readPendingApprovals(store, options.runId) : [];
    answers = parseElicitationAnswers(options.answer ?? [], pending);
    const resumedCalls = resumedToolCalls({
      checkpoint: document,
      storedResults: document.kind === "before_execute" ? await store.readToolResults(options.runId) : [],
      awaitingApproval,
      pending,
      // An answered call runs again, as an approved one does: its server asks again and gets the answer.
      approve: [...(options.approve ?? []), ...answers.keys()],
      deny: options.deny ?? [],
    });
    // The run is reopened by the runner only once everything that can refuse (agent file, configuration, tool
    // servers, contract hash) has passed: a refused resume leaves it as it was, waiting for its approval.
    prepared = {
      invocation: document.invocation,
      // The prompt follows the system message and the earlier conversation the run continued, if any.
      prompt: document.state.conversation[1 + (document.invocation.history_messages ?? 0)]?.content ?? "",
      history: document.state.conversation
        .slice(1, 1 + (document.invocation.history_messages ?? 0))
        .map((message) => ({
          role: message.role === "user" ? "user" : "assistant",
          content: message.content,
        })),
      checkpoint: document,
      transcriptCreatedAt: run.header.created_at,
      continueFrom: { entryCount: run.entryCount, headHash: run.headHash },
      contractHash: run.contractHash,
      contractVersion: recordedContractVersion(options.runId, run.contract),
      status: run.status,
      tenantId: run.tenantId,
      correlationId: run.correlationId,
      ...resumedCalls,
    };
  } finally {
    await store.close();
  }
  return runAgentFile(
    {
      agentPath: prepared.invocation.agent_path,
      // The conversation continues from the checkpoint; the prompt only chooses the abilities, hence the contract.
      prompt: prepared.prompt,
      cwd: prepared.invocation.cwd,
      set: prepared.invocation.set,
      ...(prepared.invocation.config_path !== null ? { configPath: prepared.invocation.config_path } : {}),
      ...(location !== null ? { store: location.url } : {}),
      ...(options.runStore !== undefined ? { runStore: options.runStore } : {}),
      ...(options.onRouted !== undefined ? { onRouted: options.onRouted } : {}),
      // The run goes on for whom it was started (the tenant it was found for): its tenant's store and cache, its
      // correlation id on every request.
      ...(prepared.tenantId !== null ? { tenantId: prepared.tenantId } : {}),
      ...(prepared.correlationId !== null ? { correlationId: prepared.correlationId } : {}),
      ...(options.runsDirectory !== undefined ? { runsDirectory: options.runsDirectory } : {}),
      ...(options.homeDirectory !== undefined ? { homeDirectory: options.homeDirectory } : {}),
      ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
      ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
      environment,
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(options.onEvent !== undefined ? { onEvent: options.onEvent } : {}),
      ...(options.onTransition !== undefined ? { onTransition: options.onTransition } : {}),
      ...(options.onSecretRedactor !== undefined ? { onSecretRedactor: options.onSecretRedactor } : {}),
      ...(options.traceModelHttp !== undefined ? { traceModelHttp: options.traceModelHttp } : {}),
      ...(options.traceMcp !== undefined ? { traceMcp: options.traceMcp } : {}),
      ...(options.onWarning !== undefined ? { onWarning: options.onWarning } : {}),
      ...(options.agentCatalog !== undefined ? { agentCatalog: options.agentCatalog } : {}),
      ...(options.configurationOverlay !== undefined
        ? { configurationOverlay: options.configurationOverlay }
        : {}),
      ...(options.toolCallAdmission !== undefined ? { toolCallAdmission: options.toolCallAdmission } : {}),
      ...(options.toolCache !== undefined ? { toolCache: options.toolCache } : {}),
      ...(options.modelCallBudget !== undefined ? { modelCallBudget: options.modelCallBudget } : {}),
      // The caller's own tools (a work item's workspace tools), given again: they are in the run's contract.
      ...(options.extraTools !== undefined ? { extraTools: options.extraTools } : {}),
      // The run goes on under the tool permissions it started with, whoever resumes it.
      ...(prepared.invocation.tool_permissions !== undefined
        ? {
            toolPermissions: {
              allowedClasses: prepared.invocation.tool_permissions.allowed_classes,
              preApprovedToolsAllowed: prepared.invocation.tool_permissions.pre_approved_tools_allowed,
            },
          }
        : {}),
      // Recorded again with the continued run's checkpoints, so that a later resume still finds the prompt.
      ...(prepared.history.length > 0 ? { history: prepared.history } : {}),
    },
    {
      runId: options.runId,
      checkpoint: prepared.checkpoint,
      transcriptCreatedAt: prepared.transcriptCreatedAt,
      continueFrom: prepared.continueFrom,
      contractHash: prepared.contractHash,
      contractVersion: prepared.contractVersion,
      status: prepared.status,
      decisions: prepared.decisions,
      completed: prepared.completed,
      possiblyInFlight: prepared.possiblyInFlight,
      answers,
      ...(prepared.invocation.agent_selection !== undefined
        ? { agentSelection: prepared.invocation.agent_selection }
        : {}),
    },
  );
}

/**
 * The schema and adapter versions of the run's stored contract (whose hash verification has checked): the resumed
 * run's contract is built as they built it. A contract this Charter cannot read, or recorded under an adapter it
 * does not have, cannot be continued as it ran.
 */
function recordedContractVersion(
  runId: string,
  stored: unknown,
): { schemaVersion: ContractSchemaVersion; adapterVersion: string } {
  const contract = executionContractSchema.safeParse(stored);
  if (!contract.success) {
    throw new CharterError(
      "RUN_NOT_RESUMABLE",
      `the stored contract of run ${runId} is not a contract this Charter reads`,
      {
        details: { runId, reason: "contract_unreadable" },
      },
    );
  }
  const { schema_version: schemaVersion, adapter_version: adapterVersion } = contract.data;
  if (!supportedAdapterVersions.includes(adapterVersion)) {
    throw new CharterError(
      "RUN_NOT_RESUMABLE",
      `run ${runId} was recorded under the protocol adapter ${adapterVersion}, which this Charter does not have (it has ${supportedAdapterVersions.join(", ")})`,
      { details: { runId, reason: "adapter_unsupported", adapterVersion } },
    );
  }
  return { schemaVersion, adapterVersion };
}
