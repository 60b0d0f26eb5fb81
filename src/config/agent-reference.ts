import { agentIdPattern } from "./agent-settings-schema.js";

/**
 * Whether an agent reference (`charter run <reference>`, an `agents:` entry, a workflow step's `agent:`) names a
 * registry id rather than a file: ids are lowercase letters, digits and single hyphens, so `reviewer` is an id
 * while `reviewer.md`, `./reviewer` and `agents/Reviewer` are paths.
 */
export function isAgentIdReference(reference: string): boolean {
  return agentIdPattern.test(reference);
}
