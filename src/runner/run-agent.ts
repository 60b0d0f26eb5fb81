import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { type AgentDefinition as AgentFile, loadAgentFile } from "../config/agent-file.js";
import type { AgentSettings } from "../config/agent-settings-schema.js";
import { type LoadedConfiguration, loadConfiguration } from "../config/load-configuration.js";
import { parseSetOverrides } from "../config/parse-set-overrides.js";
import { resolveModelTargets, selectModelReferences } from "../config/resolve-model-targets.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import { SecretRedactor } from "../foundation/secret-redactor.js";
import { createOpenAICompatibleModelClient } from "../model/providers/openai-compatible-model-client.js";
import type { AIAgentResult } from "../session/agent-result.js";
import type { CharterEvent } from "../session/charter-event.js";
import type { SessionState } from "../session/session-state.js";
import type { TransitionOutput } from "../session/transition-output.js";
import type { RegisteredTool, ToolSource } from "../tools/tool-definition.js";
import { processToolQueues } from "../tools/tool-queues.js";
import { createJsonlTranscriptWriter } from "../transcript/jsonl-transcript-writer.js";
import { createExtractionRunner } from "./create-extraction-runner.js";
import { type DelegationTrace, defaultMaxDelegationDepth, rootDelegationTrace } from "./delegation-trace.js";
import { preflightFailureResult } from "./preflight-failure-result.js";
import { prepareAgent } from "./prepare-agent.js";
import { startToolSources } from "./start-tool-sources.js";
import { createSubAgentTool } from "./sub-agent-tool.js";

export interface RunAgentOptions {
  /** Path of the agent file (Markdown with YAML frontmatter). */
  readonly agentPath: string;
  /** The user's task. */
  readonly prompt: string;
  /** `--config FILE`. */
  readonly configPath?: string;
  /** `--set key=value` assignments. */
  readonly set?: readonly string[];
  readonly cwd?: string;
  readonly homeDirectory?: string;
  readonly etcDirectory?: string;
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  /** Where run directories go; default `~/.charter/runs`. */
  readonly runsDirectory?: string;
  readonly environment?: RuntimeEnvironment;
  readonly signal?: AbortSignal;
  /** Extra tools (library function tools), offered beside the agent's MCP tools. */
  readonly extraTools?: readonly RegisteredTool[];
  /** Called after every state transition of the top-level run (progress output). */
  readonly onTransition?: (
    state: SessionState,
    output: TransitionOutput,
    contract: ExecutionContract,
  ) => void;
  /** The typed event stream of the top-level run. */
  readonly onEvent?: (event: CharterEvent) => void;
}

interface RunContext {
  readonly options: RunAgentOptions;
  readonly environment: RuntimeEnvironment;
  readonly cwd: string;
  readonly runsDirectory: string;
  readonly loaded: LoadedConfiguration;
  readonly overrides: AgentSettings;
  readonly redactor: SecretRedactor;
}

/**
 * Runs one agent file end to end: loads it and the layered configuration, starts its MCP servers, offers its
 * sub-agents as tools, and runs it with a JSONL transcript in the run directory. Always returns an
 * AIAgentResult: failures before the session starts are FAILED_PREFLIGHT results whose error code says what
 * was wrong (and picks the exit code).
 */
export async function runAgent(options: RunAgentOptions): Promise<AIAgentResult> {
  const environment = options.environment ?? systemEnvironment;
  const cwd = options.cwd ?? process.cwd();
  const home = options.homeDirectory ?? homedir();
  const runId = environment.newId("run");
  try {
    const agentPath = resolve(cwd, options.agentPath);
    const agent = await loadAgentFile(agentPath);
    const loaded = await loadConfiguration({
      ...(options.configPath !== undefined ? { configPath: resolve(cwd, options.configPath) } : {}),
      cwd,
      promptDirectory: dirname(agentPath),
      homeDirectory: home,
      ...(options.etcDirectory !== undefined ? { etcDirectory: options.etcDirectory } : {}),
      ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
      ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
    });
    const redactor = new SecretRedactor();
    for (const secret of loaded.secrets) redactor.addSecret(secret.value, secret.label);
    const context: RunContext = {
      options,
      environment,
      cwd,
      runsDirectory: options.runsDirectory ?? join(home, ".charter", "runs"),
      loaded,
      overrides: parseSetOverrides(options.set ?? []),
      redactor,
    };
    const maxDepth =
      context.overrides.maxDepth ?? agent.settings.maxDepth ?? loaded.configuration.defaults.maxDepth;
    const trace = rootDelegationTrace(agent.id, maxDepth ?? defaultMaxDelegationDepth);
    return await runLoadedAgent(context, agent, options.prompt, trace, runId, options.signal, true);
  } catch (error) {
    return preflightFailureResult(runId, error, environment.now());
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
): Promise<AIAgentResult> {
  const { environment, loaded, redactor } = context;
  const configuration = loaded.configuration;
  const defaults = configuration.defaults;
  // Command-line overrides apply to the top-level agent only; a sub-agent runs under its own file's settings.
  const overrides = topLevel ? context.overrides : {};
  const sources: ToolSource[] = [];
  try {
    const targets = resolveModelTargets(
      selectModelReferences(overrides, agent.settings, defaults),
      configuration,
    );
    const toolReferences = overrides.tools ?? agent.settings.tools ?? defaults.tools ?? [];
    const started = await startToolSources(toolReferences, configuration, { cwd: context.cwd, environment });
    sources.push(...started.sources);

    // Sub-agents: files listed under `agents`, relative to the listing file, each loaded (and validated) now.
    let contractHash: string | null = null;
    const subAgents: RegisteredTool[] = [];
    for (const path of agent.settings.agents ?? []) {
      const child = await loadAgentFile(resolve(agent.directory, path));
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
            ),
        }),
      );
    }

    const models = targets.map((target) =>
      createOpenAICompatibleModelClient({
        providerName: target.provider,
        baseUrl: target.connection.baseUrl,
        model: target.model,
        headers: target.connection.headers,
        environment,
        ...(target.connection.apiKey !== null ? { apiKey: target.connection.apiKey } : {}),
      }),
    );
    const prepared = prepareAgent({
      agent: { id: agent.id, systemPrompt: agent.systemPrompt, settings: agent.settings },
      configurationDefaults: defaults,
      overrides,
      targets,
      models,
      tools: [...started.tools, ...subAgents, ...(topLevel ? (context.options.extraTools ?? []) : [])],
      parentContractHash: trace.parentContractHash,
      environment,
      redactor,
      trace: { callPath: trace.callPath, parentTxnId: trace.parentTxnId, originTxnId: trace.originTxnId },
      queues: processToolQueues(configuration.queues),
      extract: createExtractionRunner({ targets, models, environment, redactor, callPath: trace.callPath }),
    });
    contractHash = prepared.contract.contract_hash;
    const runDirectory = join(context.runsDirectory, runId);
    const { result } = await prepared.run({
      prompt,
      runId,
      transcriptWriter: createJsonlTranscriptWriter(runDirectory),
      ...(signal !== undefined ? { signal } : {}),
      ...(topLevel && context.options.onTransition !== undefined
        ? { onTransition: context.options.onTransition }
        : {}),
      ...(topLevel && context.options.onEvent !== undefined ? { onEvent: context.options.onEvent } : {}),
    });
    return { ...result, transcript: { ...result.transcript, directory: runDirectory } };
  } catch (error) {
    return preflightFailureResult(runId, error, environment.now());
  } finally {
    await Promise.allSettled(sources.map((source) => source.close()));
  }
}
