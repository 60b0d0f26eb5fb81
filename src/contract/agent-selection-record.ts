/** One agent the selector ranked for a task: how confident it is (0 to 1) and why. */
export interface AgentSelectionCandidate {
  readonly agentId: string;
  readonly confidence: number;
  readonly reasons: readonly string[];
}

/**
 * How the agent of a run was chosen by selection (`charter run auto`, the `delegate` tool): the agent chosen and
 * the ranked candidates. The contract records it, as canonical JSON, in `decisions.agent_selection`, so it is part
 * of the contract's hash and of the transcript.
 */
export interface AgentSelectionRecord {
  readonly selected: string;
  readonly candidates: readonly AgentSelectionCandidate[];
}

/** The key of `decisions` that holds the selection. */
export const agentSelectionDecisionKey = "agent_selection";
