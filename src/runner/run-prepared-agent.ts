import {
  type AgentDefinition,
  type AgentRunOptions,
  type AgentRunOutput,
  prepareAgent,
} from "./prepare-agent.js";

export type PreparedAgentRun = AgentDefinition & AgentRunOptions;

/** Prepares an agent and runs it once (see `prepareAgent` for running the same agent many times). */
export function runPreparedAgent(run: PreparedAgentRun): Promise<AgentRunOutput> {
  return prepareAgent(run).run(run);
}
