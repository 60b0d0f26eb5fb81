import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { loadAgentFile } from "../config/agent-file.js";
import { loadConfiguration } from "../config/load-configuration.js";
import { parseSetOverrides } from "../config/parse-set-overrides.js";
import { resolveModelTargets, selectModelReferences } from "../config/resolve-model-targets.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import { SecretRedactor } from "../foundation/secret-redactor.js";
import { createOpenAICompatibleModelClient } from "../model/providers/openai-compatible-model-client.js";
import type { AIAgentResult } from "../session/agent-result.js";
import type { SessionState } from "../session/session-state.js";
import type { TransitionOutput } from "../session/transition-output.js";
import type { RegisteredTool, ToolSource } from "../tools/tool-definition.js";
import { createJsonlTranscriptWriter } from "../transcript/jsonl-transcript-writer.js";
import { preflightFailureResult } from "./preflight-failure-result.js";
import { runPreparedAgent } from "./run-prepared-agent.js";
import { startToolSources } from "./start-tool-sources.js";

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
  /** Called after every state transition (progress output, event streams). */
  readonly onTransition?: (
    state: SessionState,
    output: TransitionOutput,
    contract: ExecutionContract,
  ) => void;
}

/**
 * Runs one agent file end to end: loads it and the layered configuration, starts its MCP servers, and runs it
 * with a JSONL transcript in the run directory. Always returns an AIAgentResult: failures before the session
 * starts are FAILED_PREFLIGHT results whose error code says what was wrong (and picks the exit code).
 */
export async function runAgent(options: RunAgentOptions): Promise<AIAgentResult> {
  const environment = options.environment ?? systemEnvironment;
  const runId = environment.newId("run");
  const cwd = options.cwd ?? process.cwd();
  const home = options.homeDirectory ?? homedir();
  const sources: ToolSource[] = [];
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
    const configuration = loaded.configuration;
    const overrides = parseSetOverrides(options.set ?? []);
    const defaults = configuration.defaults;
    const targets = resolveModelTargets(
      selectModelReferences(overrides, agent.settings, defaults),
      configuration,
    );
    const redactor = new SecretRedactor();
    for (const secret of loaded.secrets) redactor.addSecret(secret.value, secret.label);

    const toolReferences = overrides.tools ?? agent.settings.tools ?? defaults.tools ?? [];
    const started = await startToolSources(toolReferences, configuration, cwd);
    sources.push(...started.sources);

    const runDirectory = join(options.runsDirectory ?? join(home, ".charter", "runs"), runId);
    const { result } = await runPreparedAgent({
      agent: { id: agent.id, systemPrompt: agent.systemPrompt, settings: agent.settings },
      prompt: options.prompt,
      configurationDefaults: defaults,
      overrides,
      targets,
      models: targets.map((target) =>
        createOpenAICompatibleModelClient({
          providerName: target.provider,
          baseUrl: target.connection.baseUrl,
          model: target.model,
          headers: target.connection.headers,
          environment,
          ...(target.connection.apiKey !== null ? { apiKey: target.connection.apiKey } : {}),
        }),
      ),
      tools: [...started.tools, ...(options.extraTools ?? [])],
      runId,
      environment,
      redactor,
      transcriptWriter: createJsonlTranscriptWriter(runDirectory),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(options.onTransition !== undefined ? { onTransition: options.onTransition } : {}),
    });
    return { ...result, transcript: { ...result.transcript, directory: runDirectory } };
  } catch (error) {
    return preflightFailureResult(runId, error, environment.now());
  } finally {
    await Promise.allSettled(sources.map((source) => source.close()));
  }
}
