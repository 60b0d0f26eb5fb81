import { z } from "zod";
import { computeContractHash } from "../contract/contract-hash.js";
import { CharterError } from "../foundation/charter-error.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import { checkWorkflowDefinition } from "./check-workflow-definition.js";
import type { LoadedWorkflow } from "./load-workflow-file.js";
import type { WorkflowDefinition } from "./workflow-definition.js";
import { type WorkflowFile, workflowDefinitionSchema } from "./workflow-definition-schema.js";

/** The version of the workflow contract this Charter writes and reads. */
export const workflowContractVersion = 1;
/** What a workflow run's transcript header names in place of a model adapter and profile. */
export const workflowAdapterVersion = "charter-workflow/1";
export const workflowProfileId = "workflow";

/**
 * What a workflow run is bound to, stored as its contract and hashed as a session's contract is (BLAKE3 of the
 * RFC 8785 canonical JSON of everything but its id, creation time and hash; see computeContractHash): the workflow
 * file's keys as read and where the file was. The run's transcript header names its hash; `verify` recomputes it,
 * and a resume runs the definition recorded here, not the file as it may read now.
 */
export interface WorkflowContract {
  readonly contract_id: string;
  readonly contract_hash: string;
  readonly created_at: string;
  readonly kind: "workflow";
  readonly schema_version: typeof workflowContractVersion;
  readonly workflow_id: string;
  /** Absolute path of the workflow file: agent paths in steps are relative to its directory. */
  readonly workflow_file: string;
  readonly workflow: WorkflowFile;
}

const contractSchema = z
  .object({
    contract_id: z.string().min(1),
    contract_hash: z.string().regex(/^[0-9a-f]{64}$/),
    created_at: z.string(),
    kind: z.literal("workflow"),
    schema_version: z.literal(workflowContractVersion),
    workflow_id: z.string(),
    workflow_file: z.string(),
    workflow: z.unknown(),
  })
  .strict();

export function buildWorkflowContract(
  loaded: LoadedWorkflow,
  environment: RuntimeEnvironment,
): WorkflowContract {
  const content = {
    kind: "workflow" as const,
    schema_version: workflowContractVersion as typeof workflowContractVersion,
    workflow_id: loaded.definition.id,
    workflow_file: loaded.path,
    workflow: loaded.source,
  };
  return Object.freeze({
    contract_id: environment.newId("contract"),
    contract_hash: computeContractHash(content as never),
    created_at: new Date(environment.now()).toISOString(),
    ...content,
  });
}

/**
 * A stored workflow contract, checked: its shape, its hash, and the workflow it records (checked again as a file
 * is). Throws RUN_NOT_RESUMABLE naming the run when it is not one this Charter can continue.
 */
export function readWorkflowContract(
  value: unknown,
  runId: string,
): { readonly contract: WorkflowContract; readonly definition: WorkflowDefinition } {
  const refuse = (problem: string) =>
    new CharterError("RUN_NOT_RESUMABLE", `workflow run ${runId}: its stored contract ${problem}`, {
      details: { runId, reason: "contract_invalid", problem },
    });
  const parsed = contractSchema.safeParse(value);
  if (!parsed.success) throw refuse(`is not a workflow contract of version ${workflowContractVersion}`);
  if (computeContractHash(parsed.data as never) !== parsed.data.contract_hash)
    throw refuse("does not hash to its contract_hash");
  const file = workflowDefinitionSchema.safeParse(parsed.data.workflow);
  if (!file.success) throw refuse("holds a workflow that is not valid");
  const checked = checkWorkflowDefinition(file.data);
  if (!("definition" in checked))
    throw refuse(`holds a workflow that is not valid: ${checked.issues[0]?.message}`);
  return { contract: parsed.data as WorkflowContract, definition: checked.definition };
}
