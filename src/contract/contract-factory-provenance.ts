import { CharterError } from "../foundation/charter-error.js";
import { computeContractHash } from "./contract-hash.js";
import type { ExecutionContract } from "./execution-contract.js";
import { isVerifiedContract } from "./verified-contracts.js";

const provenanceFields = ["contract_id", "contract_hash", "model_profile_id"] as const;

/**
 * The runtime's gate (seed 002 Phase 2b): a contract without its provenance, or whose content no longer
 * matches its hash, is refused with CONTRACT_PROVENANCE_MISSING before anything runs.
 */
export function assertContractProvenance(contract: ExecutionContract): void {
  const record = contract as unknown as Record<string, unknown>;
  const missing = provenanceFields.filter(
    (field) => typeof record[field] !== "string" || record[field] === "",
  );
  if (missing.length > 0) {
    throw new CharterError(
      "CONTRACT_PROVENANCE_MISSING",
      `The execution contract lacks its provenance: ${missing.join(", ")}`,
      { details: { missing } },
    );
  }
  if (isVerifiedContract(contract)) return;
  let actual: string;
  try {
    actual = computeContractHash(contract);
  } catch (error) {
    throw new CharterError(
      "CONTRACT_PROVENANCE_MISSING",
      "The execution contract's content cannot be hashed",
      {
        details: { contract_id: contract.contract_id, missing: [] },
        cause: error,
      },
    );
  }
  if (actual !== contract.contract_hash) {
    throw new CharterError(
      "CONTRACT_PROVENANCE_MISSING",
      `The execution contract ${contract.contract_id} does not match its hash: recorded ${contract.contract_hash}, content hashes to ${actual}`,
      {
        details: { contract_id: contract.contract_id, expected: contract.contract_hash, actual, missing: [] },
      },
    );
  }
}
