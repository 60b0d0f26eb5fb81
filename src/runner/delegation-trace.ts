/**
 * Where a run sits in a delegation chain (seed 003 INV-DT-001/002): the agents above it, its call path for
 * accounting, the transaction of the tool call that started it and of the chain's root.
 */
export interface DelegationTrace {
  /** Agent ids from the root to this run, this run's agent last. */
  readonly chain: readonly string[];
  readonly callPath: string;
  readonly parentTxnId: string | null;
  readonly originTxnId: string | null;
  readonly parentContractHash: string | null;
  readonly maxDepth: number;
}

/** The default longest delegation chain, seed 003 INV-DT-001. */
export const defaultMaxDelegationDepth = 5;

export function rootDelegationTrace(agentId: string, maxDepth: number): DelegationTrace {
  return {
    chain: [agentId],
    callPath: agentId,
    parentTxnId: null,
    originTxnId: null,
    parentContractHash: null,
    maxDepth,
  };
}

/**
 * Why delegating from `trace` to `childId` is refused, or null when it is allowed. The depth of a run is the
 * number of delegations above it (the root is at depth 0); a child may sit at most `maxDepth` deep.
 */
export function delegationRefusal(trace: DelegationTrace, childId: string): string | null {
  const chain = [...trace.chain, childId].join(" -> ");
  if (trace.chain.includes(childId)) {
    return `delegation cycle: '${childId}' is already in the chain ${chain} (an agent may not delegate to itself or an ancestor)`;
  }
  if (trace.chain.length > trace.maxDepth) {
    return `delegation depth ${trace.chain.length} would exceed maxDepth ${trace.maxDepth}: ${chain}`;
  }
  return null;
}

/**
 * The trace of a child run started by a tool call of the run at `trace` (a sub-agent tool, `delegate`): one agent
 * deeper, its transactions linked to the call that started it and to the chain's root.
 */
export function childDelegationTrace(
  trace: DelegationTrace,
  childId: string,
  transaction: string,
  parentContractHash: string | null,
): DelegationTrace {
  return {
    chain: [...trace.chain, childId],
    callPath: `${trace.callPath}/${childId}`,
    parentTxnId: transaction,
    originTxnId: trace.originTxnId ?? transaction,
    parentContractHash,
    maxDepth: trace.maxDepth,
  };
}
