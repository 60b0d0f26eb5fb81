import { composeToolPipeline } from "./compose-tool-pipeline.js";
import { auditStage } from "./stages/audit-stage.js";
import { executionStage } from "./stages/execution-stage.js";
import { inputValidationStage } from "./stages/input-validation-stage.js";
import { lookupStage } from "./stages/lookup-stage.js";
import { observationStage } from "./stages/observation-stage.js";
import { policyStage } from "./stages/policy-stage.js";
import type { ToolPipeline, ToolStage } from "./tool-pipeline.js";

/**
 * The standard tool pipeline. A call is looked up, its input validated, the contract's policy checked, then it
 * is executed, its output observed (oversized outputs stored) and the whole call audited.
 *
 * Stages are listed outermost first, so the two that post-process wrap the rest: `auditStage` sees every
 * result, even a refused call's, and `observationStage` sees the output before it is final.
 * `beforeExecution` stages (authorisation, rate limits, caching) run after the policy check and may answer
 * the call themselves.
 */
export function createDefaultPipeline(
  options: { readonly beforeExecution?: readonly ToolStage[] } = {},
): ToolPipeline {
  return composeToolPipeline([
    auditStage,
    observationStage,
    lookupStage,
    inputValidationStage,
    policyStage,
    ...(options.beforeExecution ?? []),
    executionStage,
  ]);
}
