import { CharterError } from "../foundation/charter-error.js";

export interface ContractIssue {
  /** Dotted path into the contract, for example `context_budget.context_window`. */
  readonly path: string;
  readonly message: string;
}

/** CONTRACT_INVALID listing every problem found, not only the first. */
export function contractInvalid(issues: readonly ContractIssue[]): CharterError {
  const listing = issues.map((issue) => `${issue.path || "(root)"}: ${issue.message}`).join("; ");
  return new CharterError("CONTRACT_INVALID", `The execution contract is invalid: ${listing}`, {
    details: { issues, paths: issues.map((issue) => issue.path) },
  });
}
