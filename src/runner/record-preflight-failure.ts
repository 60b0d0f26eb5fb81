import { join } from "node:path";
import type { AgentAbilities } from "../abilities/agent-abilities.js";
import type { AgentDefinition as AgentFile } from "../config/agent-file.js";
import type { AgentSettings } from "../config/agent-settings-schema.js";
import type { resolveModelTargets } from "../config/resolve-model-targets.js";
import type { AgentSelectionRecord } from "../contract/agent-selection-record.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import { createModelClient } from "../model/providers/create-model-client.js";
import type { AIAgentResult } from "../session/agent-result.js";
import type { DelegationTrace } from "./delegation-trace.js";
import { prepareAgent } from "./prepare-agent.js";
import type { RunContext } from "./run-context.js";
import { storePreflightFailure } from "./store-preflight-failure.js";

/**
 * Stores a new top-level run that failed before its session started (FAILED_PREFLIGHT, with its PRECHECK entry),
 * so that `runs list` and `verify` show it, under the contract known by then: the prepared one, or one built now
 * without tools when the failure came before it. Answers `failure` as it is when storing fails too (a store that
 * cannot be written): the failure is still the result.
 */
export async function recordPreflightFailure(
  context: RunContext,
  agent: AgentFile,
  failed: {
    readonly runId: string;
    readonly prompt: string;
    readonly parentRunId: string | null;
    readonly overrides: AgentSettings;
    readonly targets: ReturnType<typeof resolveModelTargets>;
    readonly preparedContract: ExecutionContract | null;
    readonly abilities: AgentAbilities | null;
    readonly selection: AgentSelectionRecord | null;
    readonly trace: DelegationTrace;
    readonly failure: AIAgentResult;
  },
): Promise<AIAgentResult> {
  const { environment, redactor } = context;
  const { runId, prompt, targets, selection, failure } = failed;
  try {
    const contract =
      failed.preparedContract ??
      prepareAgent({
        agent: { id: agent.id, systemPrompt: agent.systemPrompt, settings: agent.settings },
        configurationDefaults: context.loaded.configuration.defaults,
        overrides: failed.overrides,
        targets,
        models: targets.map((target) => createModelClient(target, { environment })),
        tools: [],
        abilities: failed.abilities,
        ...(selection !== null ? { agentSelection: selection } : {}),
        parentContractHash: failed.trace.parentContractHash,
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
      parentRunId: failed.parentRunId,
      runDirectory: join(context.runsDirectory, runId),
      environment,
      redactor,
      failure,
    });
  } catch {
    // Storing the failure failed too (a store that cannot be written): the failure is still the result.
    return failure;
  }
}
