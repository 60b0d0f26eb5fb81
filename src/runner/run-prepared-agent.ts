import type { AgentMessage } from "../contract/agent-message.js";
import { systemMessage, userMessage } from "../contract/agent-message.js";
import { buildExecutionContract } from "../contract/contract-factory.js";
import type { ContractModelTargetInput, ContractSettings } from "../contract/contract-factory-input.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import { blake3Hex } from "../foundation/content-hash.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import { SecretRedactor } from "../foundation/secret-redactor.js";
import type { ModelClient } from "../model/model-client.js";
import { ADAPTER_VERSION } from "../model/protocol-adapter.js";
import { createTokenEstimator } from "../model/token-estimator.js";
import type { AIAgentResult } from "../session/agent-result.js";
import { createSessionContext } from "../session/create-session-context.js";
import { runSession } from "../session/run-session.js";
import type { SessionDependencies } from "../session/session-dependencies.js";
import type { PreflightProblem } from "../session/session-event.js";
import type { SessionState } from "../session/session-state.js";
import type { TransitionOutput } from "../session/transition-output.js";
import { createToolOutputTool } from "../tools/builtin/tool-output-tool.js";
import { createDefaultPipeline } from "../tools/create-default-pipeline.js";
import type { RegisteredTool } from "../tools/tool-definition.js";
import { createToolOutputStore } from "../tools/tool-output-store.js";
import { ToolRegistry } from "../tools/tool-registry.js";
import { createHashChainTranscript, type HashChainTranscript } from "../transcript/hash-chain-transcript.js";
import type { TranscriptWriter } from "../transcript/transcript-writer.js";
import { createFinalReportSupport } from "./final-report-support.js";

export interface PreparedAgentRun {
  readonly agent: { readonly id: string; readonly systemPrompt: string; readonly settings: ContractSettings };
  readonly prompt: string;
  readonly configurationDefaults?: ContractSettings;
  readonly overrides?: ContractSettings;
  /** The contract's model targets and, in the same order, the clients that reach them. */
  readonly targets: readonly ContractModelTargetInput[];
  readonly models: readonly ModelClient[];
  /** Every tool the agent may use (MCP tools, function tools); `tool_output` and `final_report` are added. */
  readonly tools?: readonly RegisteredTool[];
  readonly runId?: string;
  readonly parentContractHash?: string | null;
  readonly environment?: RuntimeEnvironment;
  readonly redactor?: SecretRedactor;
  /** Where the transcript goes; without one only the chain head is computed. */
  readonly transcriptWriter?: TranscriptWriter;
  /** Keep the transcript entries in memory (returned as `transcriptEntries`). */
  readonly keepTranscriptEntries?: boolean;
  /** Where oversized tool outputs are stored; default the system temporary directory. */
  readonly toolOutputDirectory?: string;
  readonly signal?: AbortSignal;
  readonly preflight?: () => Promise<readonly PreflightProblem[]>;
  readonly onTransition?: (
    state: SessionState,
    output: TransitionOutput,
    contract: ExecutionContract,
  ) => void;
}

/**
 * Runs an agent whose pieces are already at hand (the library API, tests and benchmarks use this; `runAgent`
 * loads them from files first): builds the contract, the tool pipeline and the transcript, and runs the session.
 * Building the contract can throw (CONTRACT_INVALID); the session itself never throws.
 */
export async function runPreparedAgent(run: PreparedAgentRun): Promise<{
  result: AIAgentResult;
  contract: ExecutionContract;
  transcript: HashChainTranscript;
  state: SessionState;
}> {
  const environment = run.environment ?? systemEnvironment;
  const runId = run.runId ?? environment.newId("run");
  const estimator = createTokenEstimator();
  const outputStore = createToolOutputStore({
    runHash: blake3Hex(runId).slice(0, 24),
    countTokens: (text) => estimator.countText(text),
    ...(run.toolOutputDirectory !== undefined ? { baseDirectory: run.toolOutputDirectory } : {}),
  });
  const registry = new ToolRegistry(run.tools ?? []);
  registry.register(createToolOutputTool({ store: outputStore }));
  const defaults = run.configurationDefaults ?? {};
  const overrides = run.overrides ?? {};
  const output = overrides.output ?? run.agent.settings.output ?? defaults.output;
  const finalReport = createFinalReportSupport(output?.format ?? "markdown", output?.schema ?? null);

  const contract = buildExecutionContract({
    agent: run.agent,
    configurationDefaults: defaults,
    overrides,
    modelTargets: run.targets,
    toolManifest: [...registry.manifest(), finalReport.manifest],
    parentContractHash: run.parentContractHash ?? null,
    adapterVersion: ADAPTER_VERSION,
    environment,
  });
  const transcript = createHashChainTranscript({
    runId,
    contractHash: contract.contract_hash,
    adapterVersion: contract.adapter_version,
    modelProfileId: contract.model_profile_id,
    redactor: run.redactor ?? new SecretRedactor(),
    environment,
    ...(run.transcriptWriter !== undefined ? { writer: run.transcriptWriter } : {}),
    ...(run.keepTranscriptEntries ? { keepEntries: true } : {}),
  });
  transcript.writeContract(contract);

  const pipeline = createDefaultPipeline();
  const onTransition = run.onTransition;
  const dependencies: SessionDependencies = {
    contract,
    context: createSessionContext({
      contract,
      tokenEstimator: estimator,
      validateFinalReport: finalReport.validateArguments,
      validateTextAsJsonReport: finalReport.validateText,
    }),
    models: run.models,
    transcript,
    environment,
    runId,
    executeTool: (call, { signal, previousTool }) =>
      pipeline({
        invocation: call,
        registry,
        tool: null,
        policy: contract,
        previousToolName: previousTool,
        signal,
        runId,
        callId: call.id,
        environment,
        outputStore,
      }),
    ...(run.signal !== undefined ? { signal: run.signal } : {}),
    ...(run.preflight !== undefined ? { preflight: run.preflight } : {}),
    ...(onTransition !== undefined
      ? { onTransition: (state, out) => onTransition(state, out, contract) }
      : {}),
  };
  const conversation: AgentMessage[] = [systemMessage(run.agent.systemPrompt), userMessage(run.prompt)];
  const { result, state } = await runSession(dependencies, conversation);
  await transcript.close();
  return { result, contract, transcript, state };
}
