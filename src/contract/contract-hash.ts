import { contentHash } from "../foundation/content-hash.js";
import type { ExecutionContract, ExecutionContractContent } from "./execution-contract.js";

/**
 * The contract hash: BLAKE3 over the RFC 8785 canonical JSON of the contract's content, leaving out
 * its id, its creation time and the hash itself, so that the same inputs always give the same hash.
 */
export function computeContractHash(contract: ExecutionContractContent | ExecutionContract): string {
  const {
    contract_id: _id,
    contract_hash: _hash,
    created_at: _created,
    ...content
  } = contract as ExecutionContract;
  return contentHash(content);
}
