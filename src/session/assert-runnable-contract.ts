import { assertContractProvenance } from "../contract/contract-factory-provenance.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import { CharterError } from "../foundation/charter-error.js";

/**
 * The runtime refuses a contract without provenance or whose content no longer matches its hash (seed 002
 * Phase 2b), and one that is not deeply frozen: such a contract could still change after the first inference.
 */
export function assertRunnableContract(contract: ExecutionContract): void {
  assertContractProvenance(contract);
  if (
    !Object.isFrozen(contract) ||
    !Object.isFrozen(contract.context_budget) ||
    !Object.isFrozen(contract.tool_manifest)
  ) {
    throw new CharterError("CONTRACT_INVALID", "the execution contract is not frozen", {
      details: { contract_id: contract.contract_id },
    });
  }
}
