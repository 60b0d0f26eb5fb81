import type { AgentAbilities } from "../abilities/agent-abilities.js";
import { fitAbilities } from "../abilities/fit-abilities.js";
import { type SelectedAbility, selectAbilities } from "../abilities/select-abilities.js";
import type { AgentMessage } from "../contract/agent-message.js";
import { systemMessage, userMessage } from "../contract/agent-message.js";
import type { AgentSelectionRecord } from "../contract/agent-selection-record.js";
import { buildExecutionContract } from "../contract/contract-factory.js";
import type { ContractModelTargetInput, ContractSettings } from "../contract/contract-factory-input.js";
import type { ContractSchemaVersion, ExecutionContract } from "../contract/execution-contract.js";
import { issueContractInstance } from "../contract/issue-contract-instance.js";
import { blake3Hex } from "../foundation/content-hash.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import { SecretRedactor } from "../foundation/secret-redactor.js";
import type { ModelPricing } from "../model/compute-cost.js";
import type { ModelClient } from "../model/model-client.js";
import { ADAPTER_VERSION } from "../model/protocol-adapter.js";
import { createTokenEstimator } from "../model/token-estimator.js";
import type { AIAgentResult } from "../session/agent-result.js";
import type { CharterEvent } from "../session/charter-event.js";
import { createSessionContext } from "../session/create-session-context.js";
import { runSession } from "../session/run-session.js";
import type { SessionCheckpoint } from "../session/session-checkpoint.js";
import type { RunIdentity, SessionContext } from "../session/session-context.js";
import type { ToolCallExecutor } from "../session/session-dependencies.js";
import { sessionErrorFrom } from "../session/session-error-from.js";
import type { PreflightProblem } from "../session/session-event.js";
import type { SessionState } from "../session/session-state.js";
import type { TransitionOutput } from "../session/transition-output.js";
import type { ToolOutputExtractor } from "../tools/builtin/tool-output-extraction.js";
import { createToolOutputTool } from "../tools/builtin/tool-output-tool.js";
import { createDefaultPipeline } from "../tools/create-default-pipeline.js";
import { createToolCallExecutor } from "../tools/create-tool-call-executor.js";
import { cacheStage, type ToolResultCache } from "../tools/stages/cache-stage.js";
import { queueStage } from "../tools/stages/queue-stage.js";
import type { RegisteredTool } from "../tools/tool-definition.js";
import { freezeToolResult, type ToolExecutionResult } from "../tools/tool-execution-result.js";
import { createToolOutputStore } from "../tools/tool-output-store.js";
import type { ToolCallContext, ToolStage } from "../tools/tool-pipeline.js";
import type { ToolQueue } from "../tools/tool-queue.js";
import { ToolRegistry } from "../tools/tool-registry.js";
import { createHashChainTranscript, type HashChainTranscript } from "../transcript/hash-chain-transcript.js";
import type { TranscriptWriter } from "../transcript/transcript-writer.js";
import { createFinalReportSupport } from "./final-report-support.js";
import { budgetedModelClient, type ModelCallBudget } from "./model-call-budget.js";
import { redactingModelClient } from "./redacting-model-client.js";

/** Everything that stays the same across runs of one agent. */
export interface AgentDefinition {
  readonly agent: { readonly id: string; readonly systemPrompt: string; readonly settings: ContractSettings };
  readonly configurationDefaults?: ContractSettings;
  readonly overrides?: ContractSettings;
  /** The contract's model targets and, in the same order, the clients that reach them. */
  readonly targets: readonly ContractModelTargetInput[];
  readonly models: readonly ModelClient[];
  /** Asked before each model call and told what it consumed (a server tenant's budgets); default none. */
  readonly modelCallBudget?: ModelCallBudget;
  /** Prices per target (same order as `targets`), for `costUsd`; missing or null means unknown. */
  readonly pricing?: readonly (ModelPricing | null)[];
  /**
   * The abilities the agent names (see abilities/resolve-agent-abilities.ts): prepended to the system prompt of each
   * run, core ones always, the others when they match the run's prompt, within their token budget.
   */
  readonly abilities?: AgentAbilities | null;
  /** How a selector chose this agent (`charter run auto`, `delegate`): recorded in the contract's decisions. */
  readonly agentSelection?: AgentSelectionRecord;
  /**
   * The versions a recorded run's contract was built under (a resume): the contract is built as they built it, so
   * that an unchanged agent and configuration give the hash the run recorded, and the run goes on under the session
   * rules and adapter decisions it started with. Absent: today's.
   */
  readonly recordedContract?: {
    readonly schemaVersion: ContractSchemaVersion;
    readonly adapterVersion: string;
  };
  /** Every tool the agent may use (MCP tools, function tools); `tool_output` and `final_report` are added. */
  readonly tools?: readonly RegisteredTool[];
  readonly parentContractHash?: string | null;
  readonly environment?: RuntimeEnvironment;
  readonly redactor?: SecretRedactor;
  /** Where oversized tool outputs are stored; default the system temporary directory. */
  readonly toolOutputDirectory?: string;
  readonly preflight?: () => Promise<readonly PreflightProblem[]>;
  /** Named tool queues (`queues.<name>.concurrent`) bounding concurrent executions; see queueStage. */
  readonly queues?: ReadonlyMap<string, ToolQueue>;
  /** Caches results of read-only tools across runs (a TTL per tool; null: not cached). */
  readonly toolCache?: {
    readonly cache: ToolResultCache;
    readonly ttlFor: (call: ToolCallContext) => number | null;
  };
  /** Answers `tool_output` extraction steps with child runs; without it, extraction is unavailable. */
  readonly extract?: ToolOutputExtractor;
  /** Delegation trace ids for sub-agent runs (seed 003): set on every accounting entry of the run. */
  readonly trace?: {
    readonly callPath: string;
    readonly parentTxnId: string | null;
    readonly originTxnId: string | null;
  };
}

/** What differs between runs. */
export interface AgentRunOptions {
  readonly prompt: string;
  /**
   * Earlier messages of the conversation this run continues (a server's `conversationId`): user and assistant texts,
   * oldest first, put between the system prompt and the prompt (redacted as the prompt is), so that they are part of
   * what the run's PRECHECK entry records and every request sends.
   */
  readonly history?: readonly ConversationHistoryMessage[];
  readonly runId?: string;
  /** Where the transcript goes; without one only the chain head is computed. */
  readonly transcriptWriter?: TranscriptWriter;
  /** Keep the transcript entries in memory (`transcript.entries`). */
  readonly keepTranscriptEntries?: boolean;
  readonly signal?: AbortSignal;
  readonly onTransition?: (
    state: SessionState,
    output: TransitionOutput,
    contract: ExecutionContract,
  ) => void;
  /** Receives the typed event stream of the run. */
  readonly onEvent?: (event: CharterEvent) => void;
  /** Persists a checkpoint at every continuing COMMIT and before tools execute; awaited (durable runs). */
  readonly checkpoint?: (checkpoint: SessionCheckpoint) => Promise<void>;
  /**
   * Resume this run (same `runId`) from a checkpoint: the transcript continues the stored chain (the writer
   * already holds the run), and the session starts with a PRECHECK recording where it resumes from.
   */
  readonly resume?: {
    readonly checkpoint: SessionCheckpoint;
    readonly transcriptCreatedAt: string;
    /** Where the stored chain ends (entries may have been stored after the checkpoint); default the checkpoint. */
    readonly continueFrom?: { readonly entryCount: number; readonly headHash: string };
    /** The bytes (base64) of the conversation's tool attachments, read back from the run's raw payloads. */
    readonly attachmentData?: ReadonlyMap<string, string>;
  };
  /** Awaited after the session ends and before the transcript closes (a run store records the outcome). */
  readonly beforeClose?: (result: AIAgentResult) => Promise<void>;
  /** Executes tool calls instead of the default pipeline executor (resume wraps it for calls in flight). */
  readonly wrapToolExecutor?: (executor: ToolCallExecutor) => ToolCallExecutor;
  /** Who the run is for, recorded in its PRECHECK entry and on every accounting entry. */
  readonly runIdentity?: RunIdentity;
}

export interface AgentRunOutput {
  readonly result: AIAgentResult;
  readonly contract: ExecutionContract;
  readonly transcript: HashChainTranscript;
  readonly state: SessionState;
}

export interface PreparedAgent {
  /**
   * The contract every run starts from (each run gets its own id and creation time, same hash). For an agent with
   * abilities that depend on the task, this is the contract of a prompt that matches none of them (core abilities
   * only); `contractFor` gives the one a given prompt runs under.
   */
  readonly contract: ExecutionContract;
  /** The contract a run of this prompt runs under (its abilities chosen for the prompt), before its per-run id. */
  contractFor(prompt: string): ExecutionContract;
  run(options: AgentRunOptions): Promise<AgentRunOutput>;
}

/** Contracts kept per distinct ability selection; a long-lived agent serving endless prompts stays bounded. */
const rememberedSelections = 64;

/**
 * Prepares an agent once (contract built, validated and hashed; JSON schemas compiled; tool specs counted)
 * so that each run only does per-run work. Building the contract can throw (CONTRACT_INVALID); a run never
 * throws: its session turns every failure into a typed result.
 */
export function prepareAgent(definition: AgentDefinition): PreparedAgent {
  const environment = definition.environment ?? systemEnvironment;
  const redactor = definition.redactor ?? new SecretRedactor();
  const estimator = createTokenEstimator();
  const defaults = definition.configurationDefaults ?? {};
  const overrides = definition.overrides ?? {};
  const output = overrides.output ?? definition.agent.settings.output ?? defaults.output;
  const finalReport = createFinalReportSupport(output?.format ?? "markdown", output?.schema ?? null);
  // The tool_output tool's manifest does not depend on its store, so one instance describes every run's.
  const manifestRegistry = new ToolRegistry(definition.tools ?? []);
  manifestRegistry.register(
    createToolOutputTool({
      store: createToolOutputStore({ runHash: "manifest", countTokens: estimator.countText }),
    }),
  );
  const abilities = definition.abilities ?? null;
  const toolManifest = [...manifestRegistry.manifest(), finalReport.manifest];
  const sessionContextFor = (contract: ExecutionContract): SessionContext =>
    createSessionContext({
      contract,
      tokenEstimator: estimator,
      validateFinalReport: finalReport.validateArguments,
      validateTextAsJsonReport: finalReport.validateText,
      ...(definition.pricing !== undefined ? { pricing: definition.pricing } : {}),
      ...(definition.trace !== undefined
        ? {
            callPath: definition.trace.callPath,
            parentTxnId: definition.trace.parentTxnId,
            originTxnId: definition.trace.originTxnId,
          }
        : {}),
    });
  // One contract per ability selection. Which abilities a run gets depends on its prompt, and the injected text is
  // part of the system prompt, hence of the contract's content and hash: a prompt that selects other abilities runs
  // under another contract. Prompts that select the same ones share it (one build, then a per-run instance).
  const prepared = new Map<string, { contract: ExecutionContract; context: SessionContext }>();
  function preparedFor(selected: readonly SelectedAbility[] | null): {
    contract: ExecutionContract;
    context: SessionContext;
  } {
    const key =
      selected === null
        ? ""
        : JSON.stringify(selected.map((entry) => [entry.ability.id, entry.kind, entry.relevance]));
    const known = prepared.get(key);
    if (known !== undefined) return known;
    const contract = buildExecutionContract({
      agent: definition.agent,
      configurationDefaults: defaults,
      overrides,
      modelTargets: definition.targets,
      toolManifest,
      parentContractHash: definition.parentContractHash ?? null,
      adapterVersion: definition.recordedContract?.adapterVersion ?? ADAPTER_VERSION,
      ...(definition.recordedContract !== undefined
        ? { schemaVersion: definition.recordedContract.schemaVersion }
        : {}),
      environment,
      ...(definition.agentSelection !== undefined ? { agentSelection: definition.agentSelection } : {}),
      // Counted with the context guard's own estimator, and only for an agent that names abilities: an agent
      // without any never loads the tokenizer here.
      ...(abilities === null || selected === null
        ? {}
        : {
            abilities: fitAbilities(selected, {
              tokenBudget: abilities.tokenBudget,
              tokenBudgetSource: abilities.tokenBudgetSource,
              countText: estimator.countText,
            }),
          }),
    });
    const entry = { contract, context: sessionContextFor(contract) };
    if (prepared.size >= rememberedSelections) prepared.clear();
    prepared.set(key, entry);
    return entry;
  }
  /** What a run of this (already redacted) prompt runs under: its abilities are chosen before any inference. */
  const preparedForPrompt = (redactedPrompt: string) =>
    preparedFor(abilities === null ? null : selectAbilities(abilities, redactedPrompt));
  const template = preparedFor(abilities === null ? null : selectAbilities(abilities, "")).contract;
  // Before execution: the cache answers first (a hit needs no queue slot), then the queue bounds what runs.
  const beforeExecution: ToolStage[] = [];
  if (definition.toolCache !== undefined)
    beforeExecution.push(cacheStage(definition.toolCache.cache, definition.toolCache.ttlFor));
  if (definition.queues !== undefined && definition.queues.size > 0)
    beforeExecution.push(queueStage(definition.queues));
  const pipeline = createDefaultPipeline({ beforeExecution });
  // Secrets are redacted where data enters the session (the prompt, each model answer, each tool result), so that
  // every copy of it (conversation, checkpoints, stored results, report, printed output) holds what the transcript
  // holds, and the request hashes, computed over it, are the ones a replay of the redacted record rebuilds.
  const models = definition.models.map((model, index) => {
    const redacted = redactingModelClient(model, redactor);
    return definition.modelCallBudget === undefined
      ? redacted
      : budgetedModelClient(redacted, definition.modelCallBudget, definition.pricing?.[index] ?? null);
  });
  const redactResult = (result: ToolExecutionResult): ToolExecutionResult => {
    const redacted = redactor.redactValue(result) as ToolExecutionResult;
    return redacted === result ? result : freezeToolResult(redacted);
  };

  return {
    contract: template,
    contractFor: (prompt) => preparedForPrompt(redactor.redactString(prompt)).contract,
    async run(options) {
      const runId = options.runId ?? environment.newId("run");
      // Abilities are matched against the prompt as the session receives it (redacted): a resume, which reads it
      // back from the record, chooses the same ones and so rebuilds the same contract.
      const prompt = redactor.redactString(options.prompt);
      const { contract: runTemplate, context } = preparedForPrompt(prompt);
      const contract = issueContractInstance(runTemplate, environment);
      const outputStore = createToolOutputStore({
        runHash: blake3Hex(runId).slice(0, 24),
        countTokens: estimator.countText,
        redact: (text) => redactor.redactString(text),
        ...(definition.toolOutputDirectory !== undefined
          ? { baseDirectory: definition.toolOutputDirectory }
          : {}),
      });
      const registry = new ToolRegistry(definition.tools ?? []);
      registry.register(
        createToolOutputTool({
          store: outputStore,
          ...(definition.extract !== undefined ? { extract: definition.extract } : {}),
        }),
      );
      const transcript = createHashChainTranscript({
        runId,
        contractHash: contract.contract_hash,
        adapterVersion: contract.adapter_version,
        modelProfileId: contract.model_profile_id,
        redactor,
        environment,
        ...(options.transcriptWriter !== undefined ? { writer: options.transcriptWriter } : {}),
        ...(options.keepTranscriptEntries ? { keepEntries: true } : {}),
        ...(options.resume !== undefined
          ? {
              continueFrom: {
                entryCount: options.resume.continueFrom?.entryCount ?? options.resume.checkpoint.entry_count,
                headHash: options.resume.continueFrom?.headHash ?? options.resume.checkpoint.head_hash,
                createdAt: options.resume.transcriptCreatedAt,
              },
            }
          : {}),
      });
      transcript.writeContract(contract);
      const onTransition = options.onTransition;
      // The contract's system prompt: the agent's own, with the run's abilities prepended.
      const conversation: AgentMessage[] = [
        systemMessage(contract.system_prompt),
        ...(options.history ?? []).map((message) =>
          historyMessage(message.role, redactor.redactString(message.content)),
        ),
        userMessage(prompt),
      ];
      const { result: sessionResult, state } = await runSession(
        {
          contract,
          context:
            options.runIdentity !== undefined ? { ...context, runIdentity: options.runIdentity } : context,
          models,
          transcript,
          environment,
          runId,
          executeTool: (options.wrapToolExecutor ?? ((executor: ToolCallExecutor) => executor))(
            redactingExecutor(
              createToolCallExecutor({
                registry,
                policy: contract,
                environment,
                runId,
                outputStore,
                pipeline,
              }),
              redactResult,
            ),
          ),
          ...(options.signal !== undefined ? { signal: options.signal } : {}),
          ...(definition.preflight !== undefined ? { preflight: definition.preflight } : {}),
          ...(options.onEvent !== undefined ? { onEvent: options.onEvent } : {}),
          ...(options.checkpoint !== undefined ? { checkpoint: options.checkpoint } : {}),
          ...(options.resume !== undefined ? { resumeFrom: options.resume.checkpoint } : {}),
          ...(options.resume?.attachmentData !== undefined
            ? { attachmentData: options.resume.attachmentData }
            : {}),
          ...(onTransition !== undefined
            ? { onTransition: (next, out) => onTransition(next, out, contract) }
            : {}),
        },
        conversation,
      );
      // What is stored and returned (and so printed) is redacted whole: a provider's error message, say.
      const result = redactor.redactValue(sessionResult) as AIAgentResult;
      // A run never throws: a failure recording its end (the store refusing the last batch, say) fails the
      // result, unless the session already failed, whose error comes first.
      let closingError: unknown = null;
      try {
        await options.beforeClose?.(result);
      } catch (error) {
        closingError = error;
      }
      try {
        await transcript.close();
      } catch (error) {
        closingError ??= error;
      }
      // Stored outputs live as long as the run may still read them: until it ends, unless a durable run stopped in a
      // state it resumes from (awaiting an approval, interrupted, or its end not recorded), whose later process reads
      // them back under the same handles.
      const resumable =
        options.checkpoint !== undefined &&
        (closingError !== null ||
          result.outcome === "INTERRUPTED" ||
          result.error?.code === "APPROVAL_REQUIRED" ||
          result.error?.code === "RUN_CONFLICT");
      if (!resumable) await outputStore.remove().catch(() => undefined);
      return {
        result: redactor.redactValue(withClosingError(result, closingError)) as AIAgentResult,
        contract,
        transcript,
        state,
      };
    },
  };
}

/** One earlier message of a conversation a run continues. */
export interface ConversationHistoryMessage {
  readonly role: "user" | "assistant";
  readonly content: string;
}

function historyMessage(role: "user" | "assistant", content: string): AgentMessage {
  return role === "user" ? userMessage(content) : { content, role: "assistant", tool_calls: [] };
}

/** Tool results with registered secrets redacted before the session (and everything after it) sees them. */
function redactingExecutor(
  executor: ToolCallExecutor,
  redact: (result: ToolExecutionResult) => ToolExecutionResult,
): ToolCallExecutor {
  return async (call, context) => redact(await executor(call, context));
}

function withClosingError(result: AIAgentResult, error: unknown): AIAgentResult {
  if (error === null || result.error !== null) return result;
  return { ...result, success: false, error: sessionErrorFrom(error) };
}
