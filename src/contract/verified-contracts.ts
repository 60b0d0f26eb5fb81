import { computeContractHash } from "./contract-hash.js";
import type { ExecutionContract } from "./execution-contract.js";

// Contracts whose hash was computed from their content by this process. They are deeply frozen, so the
// hash stays true for their lifetime, and checking them again would only repeat the same work.
const verified = new WeakSet<object>();

export function rememberVerifiedContract(contract: ExecutionContract): void {
  verified.add(contract);
}

/** Whether this process computed the contract's hash from its frozen content. */
export function isVerifiedContract(contract: ExecutionContract): boolean {
  return verified.has(contract);
}

/** Whether the contract's content hashes to its `contract_hash` (recomputed unless this process built it). */
export function contractHashMatches(contract: ExecutionContract): boolean {
  if (verified.has(contract)) return true;
  const matches = computeContractHash(contract) === contract.contract_hash;
  if (matches && Object.isFrozen(contract)) verified.add(contract);
  return matches;
}
