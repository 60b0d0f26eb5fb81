/**
 * Charter's library API. Load agents and configuration, build contracts, run sessions with TypeScript function
 * tools, listen to the typed event stream, and test with the scripted models Charter tests itself with.
 */

// Abilities: shared knowledge files injected into agents' system prompts
export type { Ability, AbilityLibrary } from "./abilities/ability.js";
export type { AgentAbilities } from "./abilities/agent-abilities.js";
export { loadAbilityLibrary } from "./abilities/load-ability-library.js";
export { parseAbilityFile } from "./abilities/parse-ability-file.js";
export { type AbilitySettingLayers, resolveAgentAbilities } from "./abilities/resolve-agent-abilities.js";
export type { AgentProblem } from "./agents/agent-problem.js";
// The agent registry
export { AgentRegistry } from "./agents/agent-registry.js";
export { type AgentDetails, type AgentSummary, agentDetails, agentSummary } from "./agents/agent-summary.js";
export { createAgentCatalog } from "./agents/create-agent-catalog.js";
export { type LoadAgentRegistryOptions, loadAgentRegistry } from "./agents/load-agent-registry.js";
export { type ResolvedAgentReference, resolveAgentReference } from "./agents/resolve-agent-reference.js";
export {
  resumeStoredRunWithRegistry as resumeStoredRun,
  runAgentWithRegistry as runAgent,
} from "./agents/run-agent-with-registry.js";
export { type AgentRegistryScan, scanAgentRegistry } from "./agents/scan-agent-registry.js";
export {
  type AgentSelectionCandidate,
  type SelectAgentsOptions,
  selectAgents,
  selectionWeights,
} from "./agents/select-agents.js";
export { standardAgent, standardAgentId } from "./agents/standard-agent.js";
// Agents, configuration, contracts
export {
  type AgentDefinition as AgentFile,
  type AgentProfile,
  loadAgentFile,
  parseAgentFile,
} from "./config/agent-file.js";
export { isAgentIdReference } from "./config/agent-reference.js";
export { type LoadConfigurationOptions, loadConfiguration } from "./config/load-configuration.js";
export { parseSetOverrides } from "./config/parse-set-overrides.js";
export { resolveModelTargets, selectModelReferences } from "./config/resolve-model-targets.js";
// The conformance corpus (`charter conformance`)
export type { ModelBehaviour } from "./conformance/classify-model-behaviour.js";
export type { ConformanceCaseName } from "./conformance/conformance-case.js";
export type { ConformanceMetrics } from "./conformance/conformance-metrics.js";
export { type RunConformanceOptions, runConformance } from "./conformance/run-conformance.js";
export {
  type ConformanceCaseRun,
  type ConformanceCorpusOptions,
  type ConformanceReport,
  runConformanceCorpus,
} from "./conformance/run-conformance-corpus.js";
export type { AgentMessage, ToolInvocation } from "./contract/agent-message.js";
export { type AgentOutcome, agentOutcomes, isSuccessfulOutcome } from "./contract/agent-outcome.js";
export type { AgentSelectionRecord } from "./contract/agent-selection-record.js";
export { buildExecutionContract } from "./contract/contract-factory.js";
export type { ContractModelTargetInput, ContractSettings } from "./contract/contract-factory-input.js";
export { computeContractHash } from "./contract/contract-hash.js";
export type { ExecutionContract } from "./contract/execution-contract.js";
export { canonicalJson } from "./foundation/canonical-json.js";
// Errors, hashing, the environment seam
export { CharterError } from "./foundation/charter-error.js";
export { blake3Hex, contentHash } from "./foundation/content-hash.js";
export {
  deterministicEnvironment,
  type RuntimeEnvironment,
  systemEnvironment,
} from "./foundation/environment.js";
export type { ErrorCode } from "./foundation/error-codes.js";
export { SecretRedactor } from "./foundation/secret-redactor.js";
export { computeCostUsd, type ModelPricing } from "./model/compute-cost.js";
// Models
export { ModelCallError, type ModelErrorClass } from "./model/model-call-error.js";
export type {
  ModelClient,
  ModelDelta,
  ModelRequest,
  ModelResponse,
  ModelUsage,
} from "./model/model-client.js";
export { createModelClient, type ModelClientTarget } from "./model/providers/create-model-client.js";
export type { ModelConnection } from "./model/providers/model-connection.js";
export { createOpenAICompatibleModelClient } from "./model/providers/openai-compatible-model-client.js";
export type { AgentCatalog, AgentLookup, AgentSelection } from "./runner/agent-catalog.js";
// Durable runs
export {
  type CompletedToolCall,
  guardToolCalls,
  type IdempotencyClass,
  idempotencyClassOf,
  type ToolCallDecision,
  type ToolCallGuardOptions,
  type TurnCall,
} from "./runner/guard-tool-calls.js";
// Running agents
export {
  type AgentDefinition,
  type AgentRunOptions,
  type AgentRunOutput,
  type PreparedAgent,
  prepareAgent,
} from "./runner/prepare-agent.js";
export { replayRecordedRun } from "./runner/replay-recorded-run.js";
export type { ReplayDivergence, ReplayReport } from "./runner/replay-report.js";
export { replayRunDirectory } from "./runner/replay-run-directory.js";
export { replayStoredRun } from "./runner/replay-stored-run.js";
export type { ResumeStoredRunOptions } from "./runner/resume-stored-run.js";
export type { RunAgentOptions } from "./runner/run-agent.js";
export { type PreparedAgentRun, runPreparedAgent } from "./runner/run-prepared-agent.js";
export type { AccountingEntry, LlmAccountingEntry, ToolAccountingEntry } from "./session/accounting-entry.js";
export type { AIAgentResult } from "./session/agent-result.js";
export type { CharterEvent, CharterEventType } from "./session/charter-event.js";
export type { FinalReport } from "./session/final-report.js";
export type { PendingApproval } from "./session/pending-approval.js";
export type { SessionCheckpoint } from "./session/session-checkpoint.js";
export { openRunStore } from "./store/open-run-store.js";
export type { RunStore } from "./store/run-store.js";
export { createStoreTranscriptWriter } from "./store/store-transcript-writer.js";
export { toolRequestHash } from "./store/tool-request-hash.js";
export { verifyStoredRun } from "./store/verify-stored-run.js";
// Testing your own agents
export { type RecordedRequest, startScriptedOpenAIServer } from "./testing/scripted-openai-server.js";
export type { ScriptedStep } from "./testing/scripted-openai-step.js";
export {
  type ScriptedProviderServer,
  startScriptedProviderServer,
} from "./testing/scripted-provider-server.js";
export { createStrictScriptedModel, type StrictScriptedModel } from "./testing/strict-scripted-model.js";
// Tools
export { createToolOutputTool } from "./tools/builtin/tool-output-tool.js";
export { defineFunctionTool, type FunctionToolDefinition } from "./tools/define-function-tool.js";
export type { McpServerHealth } from "./tools/mcp-server-health.js";
export { createMcpSource, type McpSourceOptions } from "./tools/sources/mcp-source.js";
export { createRestToolSource } from "./tools/sources/rest-tool-source.js";
export { queueStage } from "./tools/stages/queue-stage.js";
export type {
  RegisteredTool,
  ToolExecutionContext,
  ToolOutput,
  ToolSource,
} from "./tools/tool-definition.js";
export type { ToolExecutionResult } from "./tools/tool-execution-result.js";
export { createToolQueues, processToolQueues } from "./tools/tool-queues.js";
export { createHashChainTranscript } from "./transcript/hash-chain-transcript.js";
// Transcripts
export { createInMemoryTranscriptWriter } from "./transcript/in-memory-transcript-writer.js";
export { createJsonlTranscriptWriter } from "./transcript/jsonl-transcript-writer.js";
export { reassembleRawRequest } from "./transcript/raw-request-parts.js";
export { verifyEntries, verifyRunDirectory } from "./transcript/verify-transcript.js";
// Work items: atomic agent changes to a git repository
export { parseWorkItem } from "./work/load-work-item.js";
export { recoverInterruptedWork, type WorkRecovery } from "./work/recover-interrupted-work.js";
export { type RunWorkItemOptions, runWorkItem } from "./work/run-work-item.js";
export { type RunWorkPlanOptions, runWorkPlan } from "./work/run-work-plan.js";
export { stateHash, workingTreeListing } from "./work/state-listing.js";
export { type ReceiptVerification, verifyWorkReceipt } from "./work/verify-work-receipt.js";
export type { WorkItem } from "./work/work-item-schema.js";
export type {
  BlockedWorkItemResult,
  WorkPlanItemResult,
  WorkPlanResult,
} from "./work/work-plan-result.js";
export type { WorkReceipt } from "./work/work-receipt.js";
export { openWorkRepository } from "./work/work-repository.js";
export type { WorkRunResult } from "./work/work-run-result.js";
// Workflows
export { type LoadedWorkflow, loadWorkflowFile } from "./workflow/load-workflow-file.js";
export { type ResumeWorkflowOptions, resumeWorkflow } from "./workflow/resume-workflow.js";
export { type RunWorkflowOptions, runWorkflow } from "./workflow/run-workflow.js";
export {
  type ChildRunVerification,
  verifyWorkflowRun,
  type WorkflowVerificationReport,
} from "./workflow/verify-workflow-run.js";
export type { WorkflowDefinition, WorkflowStep } from "./workflow/workflow-definition.js";
export type { WorkflowProgressEvent } from "./workflow/workflow-progress-event.js";
export type { WorkflowError, WorkflowResult, WorkflowStepResult } from "./workflow/workflow-result.js";
export type { StepStatus, WorkflowStatus } from "./workflow/workflow-status.js";
