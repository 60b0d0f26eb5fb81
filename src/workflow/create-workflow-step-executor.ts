import { createAgentCatalog } from "../agents/create-agent-catalog.js";
import { resumeStoredRun } from "../runner/resume-stored-run.js";
import { runAgent } from "../runner/run-agent.js";
import { runToolCall } from "../runner/run-tool-call.js";
import { resolveStepAgent } from "./resolve-step-agent.js";
import { stepResultFromAgentResult, stepResultFromToolResult } from "./step-run-result.js";
import type { WorkflowRunContext } from "./workflow-run-context.js";
import type { WorkflowStepExecutor } from "./workflow-step-executor.js";

/**
 * The executor over the runner: an agent step is `runAgent` (its own contract, transcript and stored run, the
 * workflow run as its parent, the same store, tenant and correlation id; a registry id resolved in the agent
 * registry), a continued one `resumeStoredRun`, a tool step `runToolCall` (the tool pipeline, the workflow's
 * configuration).
 */
export function createWorkflowStepExecutor(context: WorkflowRunContext): WorkflowStepExecutor {
  // One registry for every step of the run: its folders are read once.
  const agentCatalog = context.agentCatalog ?? createAgentCatalog();
  const shared = {
    agentCatalog,
    store: context.storeUrl,
    environment: context.environment,
    ...(context.runsDirectory !== undefined ? { runsDirectory: context.runsDirectory } : {}),
    ...(context.homeDirectory !== undefined ? { homeDirectory: context.homeDirectory } : {}),
    ...(context.binaryDirectory !== undefined ? { binaryDirectory: context.binaryDirectory } : {}),
    ...(context.processEnvironment !== undefined ? { processEnvironment: context.processEnvironment } : {}),
    ...(context.configurationOverlay !== undefined
      ? { configurationOverlay: context.configurationOverlay }
      : {}),
    // Not recorded with a step's run: a continued step is given it again.
    ...(context.modelCallBudget !== undefined ? { modelCallBudget: context.modelCallBudget } : {}),
  };
  return {
    async runAgent(request) {
      const result = await runAgent({
        ...shared,
        agentPath: resolveStepAgent(request.agent, context.workflowDirectory),
        prompt: request.prompt,
        runId: request.runId,
        parentRunId: context.workflowRunId,
        cwd: context.cwd,
        ...(context.configPath !== null ? { configPath: context.configPath } : {}),
        ...(context.etcDirectory !== undefined ? { etcDirectory: context.etcDirectory } : {}),
        ...(context.tenantId !== null ? { tenantId: context.tenantId } : {}),
        ...(context.correlationId !== null ? { correlationId: context.correlationId } : {}),
        ...(context.toolPermissions !== undefined ? { toolPermissions: context.toolPermissions } : {}),
        signal: request.signal,
      });
      return stepResultFromAgentResult(result);
    },
    async continueAgent(request) {
      const decided = context.stepDecisions?.[request.runId];
      const result = await resumeStoredRun({
        ...(decided !== undefined ? { approve: decided.approve, deny: decided.deny } : {}),
        ...shared,
        runId: request.runId,
        cwd: context.cwd,
        ...(context.etcDirectory !== undefined ? { etcDirectory: context.etcDirectory } : {}),
        ...(context.tenantId !== null ? { tenantId: context.tenantId } : {}),
        signal: request.signal,
      });
      return stepResultFromAgentResult(result);
    },
    async runTool(request) {
      const { result } = await runToolCall({
        name: request.name,
        arguments: request.arguments,
        callId: request.callId,
        runId: context.workflowRunId,
        configuration: context.configuration,
        cwd: context.cwd,
        environment: context.environment,
        redactor: context.redactor,
        signal: request.signal,
        mayHaveRun: request.mayHaveRun,
      });
      return stepResultFromToolResult(result, request.signal.aborted);
    },
  };
}
