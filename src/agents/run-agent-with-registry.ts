import { type ResumeStoredRunOptions, resumeStoredRun } from "../runner/resume-stored-run.js";
import { type RunAgentOptions, runAgent } from "../runner/run-agent.js";
import type { AIAgentResult } from "../session/agent-result.js";
import { createAgentCatalog } from "./create-agent-catalog.js";

/**
 * The library's `runAgent`: the runner's, with the project's agent registry as its catalog unless one is given, so
 * that `agentPath` and `agents:` entries may be registry ids as on the command line.
 */
export function runAgentWithRegistry(options: RunAgentOptions): Promise<AIAgentResult> {
  return runAgent({ agentCatalog: createAgentCatalog(), ...options });
}

/** The library's `resumeStoredRun`: a run of a built-in agent, or with sub-agents named by id, resumes too. */
export function resumeStoredRunWithRegistry(options: ResumeStoredRunOptions): Promise<AIAgentResult> {
  return resumeStoredRun({ agentCatalog: createAgentCatalog(), ...options });
}
