import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { ExecutionContract } from "./execution-contract.js";
import { contractHashMatches, rememberVerifiedContract } from "./verified-contracts.js";

/**
 * A new contract for another run of the same agent: the same frozen content and hash, a new `contract_id`
 * and `created_at` (the two fields the hash leaves out). Building the content again would give the same
 * hash, so a prepared agent builds it once and issues an instance per run.
 */
export function issueContractInstance(
  template: ExecutionContract,
  environment: RuntimeEnvironment,
): ExecutionContract {
  if (!contractHashMatches(template)) {
    // Never copy a contract whose content no longer matches its hash.
    return template;
  }
  const instance: ExecutionContract = Object.freeze({
    ...template,
    contract_id: environment.newId("contract"),
    created_at: new Date(environment.now()).toISOString(),
  });
  rememberVerifiedContract(instance);
  return instance;
}
