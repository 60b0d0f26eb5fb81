import type { AgentOutcome } from "../contract/agent-outcome.js";
import type { ContractModelTargetInput, ContractSettings } from "../contract/contract-factory-input.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import { SecretRedactor } from "../foundation/secret-redactor.js";
import type { ModelClient } from "../model/model-client.js";
import { prepareAgent } from "../runner/prepare-agent.js";
import { createInMemoryTranscriptWriter } from "../transcript/in-memory-transcript-writer.js";
import { checkTranscriptInvariants } from "./check-transcript-invariants.js";
import {
  classifyModelBehaviour,
  executedToolResults,
  type ModelBehaviour,
} from "./classify-model-behaviour.js";
import type { ConformanceCase, ConformanceCaseName } from "./conformance-case.js";
import { conformanceCorpus } from "./conformance-corpus.js";
import {
  type ConformanceMetrics,
  computeConformanceMetrics,
  type MeasuredRun,
} from "./conformance-metrics.js";
import type { ConformanceToolLog } from "./conformance-tools.js";
import { prescribedOutcome } from "./prescribed-outcome.js";

export interface ConformanceCorpusOptions {
  /** The model under test and the client that reaches it. */
  readonly target: ContractModelTargetInput;
  readonly model: ModelClient;
  /** How many times the whole corpus runs (default 1). */
  readonly repeat?: number;
  /** The configuration's defaults (temperature, retries...): the cases' own settings win over them. */
  readonly configurationDefaults?: ContractSettings;
  readonly environment?: RuntimeEnvironment;
  readonly redactor?: SecretRedactor;
  /** The tool timeout of the timeout case (default `defaultConformanceToolTimeoutMs`). */
  readonly toolTimeoutMs?: number;
  /** Where oversized tool outputs are stored; default the system temporary directory. */
  readonly toolOutputDirectory?: string;
  /** Run only these cases (default all six). */
  readonly cases?: readonly ConformanceCaseName[];
  readonly signal?: AbortSignal;
  /** Called after each run, for progress output. */
  readonly onRun?: (run: ConformanceCaseRun) => void;
}

/** One run of one case, judged. */
export interface ConformanceCaseRun {
  readonly case: ConformanceCaseName;
  readonly title: string;
  /** 1-based. */
  readonly repetition: number;
  readonly runId: string;
  /** What the model did, decisively, and attempt by attempt. */
  readonly behaviour: ModelBehaviour;
  readonly inferences: readonly string[];
  /** Calls of the case's own tools that executed (not `final_report` or `tool_output`). */
  readonly agentToolsExecuted: number;
  /** Attempts whose tool-call output could not be parsed. */
  readonly malformedInferences: number;
  readonly expectedOutcome: AgentOutcome;
  readonly outcome: AgentOutcome;
  readonly errorCode: string | null;
  readonly passed: boolean;
  /** Why it failed: a wrong outcome class, broken transcript invariants, the case's own checks. */
  readonly problems: readonly string[];
  readonly durationMs: number;
}

export interface ConformanceReport {
  /** `provider/model`. */
  readonly target: string;
  readonly repeat: number;
  readonly runs: readonly ConformanceCaseRun[];
  readonly metrics: ConformanceMetrics;
  /** True when every run passed. */
  readonly passed: boolean;
}

async function runCase(
  conformanceCase: ConformanceCase,
  repetition: number,
  options: ConformanceCorpusOptions,
  environment: RuntimeEnvironment,
  redactor: SecretRedactor,
): Promise<ConformanceCaseRun> {
  const toolLog: ConformanceToolLog = { executions: [] };
  const agent = prepareAgent({
    agent: {
      id: `conformance-${conformanceCase.name.replaceAll("_", "-")}`,
      systemPrompt: conformanceCase.systemPrompt,
      settings: conformanceCase.settings,
    },
    configurationDefaults: options.configurationDefaults ?? {},
    targets: [options.target],
    models: [options.model],
    tools: conformanceCase.tools(toolLog),
    environment,
    redactor,
    ...(options.toolOutputDirectory !== undefined
      ? { toolOutputDirectory: options.toolOutputDirectory }
      : {}),
  });
  const writer = createInMemoryTranscriptWriter();
  const startedAt = environment.now();
  const { result, contract } = await agent.run({
    prompt: conformanceCase.prompt,
    transcriptWriter: writer,
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
  const durationMs = environment.now() - startedAt;
  const entries = writer.entries;
  const policy = contract.tool_policy;
  const classification = classifyModelBehaviour(entries, policy);
  const expectedOutcome = prescribedOutcome(
    classification.behaviour,
    policy,
    classification.agentToolsExecuted,
  );
  const problems: string[] = [];
  if (result.outcome === "INTERRUPTED")
    problems.push("the run was interrupted (the pass was cancelled), so what the model did was not judged");
  else if (result.outcome !== expectedOutcome)
    problems.push(
      `the outcome is ${result.outcome}; the contract prescribes ${expectedOutcome} for what the model did`,
    );
  if (writer.header === null) {
    problems.push("the run wrote no transcript header");
  } else {
    problems.push(
      ...checkTranscriptInvariants(
        { result, header: writer.header, contract: writer.contract, entries, raw: writer.raw },
        policy,
      ),
    );
  }
  problems.push(
    ...conformanceCase.check({ result, entries, toolResults: executedToolResults(entries), toolLog }),
  );
  // The transcript entries it was read from are redacted already; the record is redacted again as a whole, since
  // it is printed, so that no later field can carry a secret out.
  const record: ConformanceCaseRun = {
    case: conformanceCase.name,
    title: conformanceCase.title,
    repetition,
    runId: result.runId,
    behaviour: classification.behaviour,
    inferences: classification.inferences,
    agentToolsExecuted: classification.agentToolsExecuted,
    malformedInferences: classification.malformedInferences,
    expectedOutcome,
    outcome: result.outcome,
    errorCode: result.error?.code ?? null,
    passed: problems.length === 0,
    problems,
    durationMs,
  };
  return redactor.redactValue(record) as ConformanceCaseRun;
}

/**
 * Runs the conformance corpus against one model: every case `repeat` times, in order, each run under its own
 * contract with the corpus's built-in tools and an in-memory transcript. A run passes when its outcome class is the
 * one the contract prescribes for what the model did (read from the transcript) and the transcript invariants and
 * the case's own checks hold. Never throws for a model's behaviour; an aborted `signal` ends each remaining run
 * `INTERRUPTED` (which then fails its case).
 */
export async function runConformanceCorpus(options: ConformanceCorpusOptions): Promise<ConformanceReport> {
  const environment = options.environment ?? systemEnvironment;
  const redactor = options.redactor ?? new SecretRedactor();
  const repeat = options.repeat ?? 1;
  const selected = options.cases === undefined ? null : new Set(options.cases);
  const cases = conformanceCorpus(
    options.toolTimeoutMs === undefined ? {} : { toolTimeoutMs: options.toolTimeoutMs },
  ).filter((conformanceCase) => selected === null || selected.has(conformanceCase.name));
  const runs: ConformanceCaseRun[] = [];
  const measured: MeasuredRun[] = [];
  for (let repetition = 1; repetition <= repeat; repetition++) {
    for (const conformanceCase of cases) {
      const run = await runCase(conformanceCase, repetition, options, environment, redactor);
      runs.push(run);
      options.onRun?.(run);
      measured.push({
        requiredPolicy: conformanceCase.settings.toolPolicy === "required",
        noToolCall: run.agentToolsExecuted === 0,
        inferences: run.inferences.length,
        malformedInferences: run.malformedInferences,
        durationMs: run.durationMs,
        budgetExhausted: run.outcome === "FAILED_BUDGET_EXHAUSTED",
      });
    }
  }
  return {
    target: `${options.target.provider}/${options.target.model}`,
    repeat,
    runs,
    metrics: computeConformanceMetrics(measured),
    passed: runs.every((run) => run.passed),
  };
}
