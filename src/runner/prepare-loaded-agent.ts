import type { AgentAbilities } from "../abilities/agent-abilities.js";
import type { AgentDefinition as AgentFile } from "../config/agent-file.js";
import type { AgentSettings } from "../config/agent-settings-schema.js";
import { findModelPricing } from "../config/pricing-configuration-schema.js";
import type { resolveModelTargets } from "../config/resolve-model-targets.js";
import type { AgentSelectionRecord } from "../contract/agent-selection-record.js";
import type { ModelClient } from "../model/model-client.js";
import type { RegisteredTool } from "../tools/tool-definition.js";
import { processToolQueues } from "../tools/tool-queues.js";
import { configureToolIdempotency } from "./configure-tool-idempotency.js";
import { createExtractionRunner } from "./create-extraction-runner.js";
import type { DelegationTrace } from "./delegation-trace.js";
import { type PreparedAgent, prepareAgent } from "./prepare-agent.js";
import type { RunContext } from "./run-context.js";
import { createStoreToolResultCache, toolCacheTtl } from "./store-tool-result-cache.js";

/** The tools' idempotency lists of one agent, each with the precedence of every setting. */
export interface AgentIdempotencySettings {
  readonly readOnlyTools: readonly string[];
  readonly idempotentTools: readonly string[];
  readonly destructiveTools: readonly string[];
}

/**
 * The agent prepared to run (`prepareAgent`) with everything the run gives it: its model clients and pricing, its
 * tools with their idempotency classes (the sources' tools, its sub-agents and, for the top-level agent, the
 * caller's extra tools), its tool queues, the tenant's model-call budget, the tool result cache, the extraction
 * runner and, for a resume, the contract versions the run recorded. Nothing runs yet: the contract can still be
 * checked before the session starts.
 */
export function prepareLoadedAgent(
  context: RunContext,
  agent: AgentFile,
  settings: {
    readonly overrides: AgentSettings;
    readonly targets: ReturnType<typeof resolveModelTargets>;
    readonly models: readonly ModelClient[];
    readonly tools: readonly RegisteredTool[];
    readonly idempotency: AgentIdempotencySettings;
    readonly trace: DelegationTrace;
    readonly abilities: AgentAbilities | null;
    readonly selection: AgentSelectionRecord | null;
    readonly topLevel: boolean;
  },
): PreparedAgent {
  const { environment, redactor } = context;
  const configuration = context.loaded.configuration;
  const { overrides, targets, models, trace, selection, topLevel } = settings;
  return prepareAgent({
    agent: { id: agent.id, systemPrompt: agent.systemPrompt, settings: agent.settings },
    configurationDefaults: configuration.defaults,
    overrides,
    targets,
    models,
    pricing: targets.map(
      (target) => findModelPricing(configuration.pricing, target.provider, target.model) ?? null,
    ),
    tools: configureToolIdempotency(
      [...settings.tools, ...(topLevel ? (context.options.extraTools ?? []) : [])],
      settings.idempotency,
    ),
    parentContractHash: trace.parentContractHash,
    environment,
    redactor,
    trace: { callPath: trace.callPath, parentTxnId: trace.parentTxnId, originTxnId: trace.originTxnId },
    abilities: settings.abilities,
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
}
