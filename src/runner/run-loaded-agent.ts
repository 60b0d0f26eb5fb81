import type { AgentAbilities } from "../abilities/agent-abilities.js";
import type { AgentDefinition as AgentFile } from "../config/agent-file.js";
import { resolveModelTargets, selectModelReferences } from "../config/resolve-model-targets.js";
import type { AgentSelectionRecord } from "../contract/agent-selection-record.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import type { AIAgentResult } from "../session/agent-result.js";
import type { ToolSource } from "../tools/tool-definition.js";
import { checkResumable } from "./check-resumable.js";
import { checkToolReferences } from "./check-tool-references.js";
import { createRunModelClients } from "./create-run-model-clients.js";
import type { DelegationTrace } from "./delegation-trace.js";
import { preflightFailureResult } from "./preflight-failure-result.js";
import { prepareLoadedAgent } from "./prepare-loaded-agent.js";
import { recordPreflightFailure } from "./record-preflight-failure.js";
import { reopenForResume } from "./reopen-for-resume.js";
import { resolveRunAbilities } from "./resolve-run-abilities.js";
import { runAgentSession } from "./run-agent-session.js";
import type { RunContext } from "./run-context.js";
import { startAgentToolSources } from "./start-agent-tool-sources.js";
import { type RunChildAgent, subAgentTools } from "./sub-agent-tools.js";

/**
 * Runs one loaded agent (the top-level one, or a sub-agent for a tool call); never throws. The phases, each in a
 * file of its own, in the order a run goes through them:
 * 1. resolve: its abilities (one that does not exist stops the run before anything starts) and model targets;
 * 2. start: its model clients, tool sources and the tools of its sub-agents;
 * 3. prepare: the agent and the contract of this prompt, then the preflight checks (tool references, and for a
 *    resume the checkpoint and contract hash) before anything is stored or reopened;
 * 4. run: the session, with its transcript, durable hooks, tool guards and heartbeat.
 * A failure before the session starts is a FAILED_PREFLIGHT result; a new top-level run's is stored all the same.
 * The tool sources started are closed at the end, whatever happened.
 */
export async function runLoadedAgent(
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
  try {
    // First: an ability the agent names that does not exist stops the run before anything starts or is stored.
    abilities = await resolveRunAbilities(context, agent, overrides);
    targets = resolveModelTargets(selectModelReferences(overrides, agent.settings, defaults), configuration);
    const toolReferences = overrides.tools ?? agent.settings.tools ?? defaults.tools ?? [];
    const models = createRunModelClients(context, targets);
    const started = await startAgentToolSources(context, toolReferences, {
      targets,
      models,
      callPath: trace.callPath,
      topLevel,
    });
    sources.push(...started.sources);

    // Sub-agents run under this run (its id their parent's), each with a run id of its own. Their tools name this
    // run's contract hash as their parent's, known only once the agent is prepared below.
    let contractHash: string | null = null;
    const runChild: RunChildAgent = (child, childPrompt, childTrace, childSignal, childSelection) =>
      runLoadedAgent(
        context,
        child,
        childPrompt,
        childTrace,
        environment.newId("run"),
        childSignal,
        false,
        runId,
        childSelection,
      );
    const subAgents = await subAgentTools(context, agent, trace, () => contractHash, runChild);

    // Each key with the precedence of every setting: `--set`, else the agent file's list, else the configuration
    // defaults'. They decide approvals and repeats, so an override must never be accepted and then ignored.
    const idempotency = {
      readOnlyTools: overrides.readOnlyTools ?? agent.settings.readOnlyTools ?? defaults.readOnlyTools ?? [],
      idempotentTools:
        overrides.idempotentTools ?? agent.settings.idempotentTools ?? defaults.idempotentTools ?? [],
      destructiveTools:
        overrides.destructiveTools ?? agent.settings.destructiveTools ?? defaults.destructiveTools ?? [],
    };
    const prepared = prepareLoadedAgent(context, agent, {
      overrides,
      targets,
      models,
      tools: [...started.tools, ...subAgents],
      idempotency,
      trace,
      abilities,
      selection,
      topLevel,
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
    checkToolReferences(prepared.contract, started, configuration, agent.id);
    const resume = topLevel ? context.resume : null;
    if (resume !== null) checkResumable(resume, runId, runContract.contract_hash);
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
    return await runAgentSession(context, agent, prepared, {
      runId,
      prompt,
      signal,
      topLevel,
      parentRunId,
      resume,
      overrides,
      destructiveTools: idempotency.destructiveTools,
      onStarted: () => {
        sessionStarted = true;
      },
    });
  } catch (error) {
    const failure = preflightFailureResult(runId, error, environment.now(), redactor);
    // A new top-level run that failed before its session started is stored all the same (FAILED_PREFLIGHT, with
    // its PRECHECK entry), so that `runs list` and `verify` show it; a refused resume leaves its run as it was.
    if (!topLevel || context.resume !== null || sessionStarted || targets === null) return failure;
    return await recordPreflightFailure(context, agent, {
      runId,
      prompt,
      parentRunId,
      overrides,
      targets,
      preparedContract,
      abilities,
      selection,
      trace,
      failure,
    });
  } finally {
    await Promise.allSettled(sources.map((source) => source.close()));
  }
}
