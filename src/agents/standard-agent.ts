import type { AgentDefinition } from "../config/agent-file.js";
import { deepFreeze } from "../foundation/deep-freeze.js";

/** The id of the agent that always exists: the fallback of selection. */
export const standardAgentId = "standard";

/**
 * The system prompt of the built-in `standard` agent. It is the agent a task goes to when no other matches, so it
 * assumes nothing about the task and no tools beyond those the configuration's `defaults` give every agent.
 */
export const standardAgentSystemPrompt = [
  "You are a careful general-purpose assistant.",
  "Work on the task you are given, using the tools you have when they help.",
  "Be accurate and concise. Do not invent facts, file contents or tool results; say plainly what you could not",
  "find out or do.",
  "When you are done, give your complete answer as your final report.",
].join("\n");

/**
 * The built-in `standard` agent. It sets no contract settings of its own, so it runs under the configuration's
 * `defaults` (its model is `defaults.models`) and the built-in defaults. A registry file with id `standard`
 * replaces it. `directory` is where it looks for nothing but stands in for a file's directory (the working
 * directory of the registry that holds it).
 */
export function standardAgent(directory: string): AgentDefinition {
  return deepFreeze({
    id: standardAgentId,
    path: `built-in:${standardAgentId}`,
    directory,
    systemPrompt: standardAgentSystemPrompt,
    settings: {
      description:
        "A general-purpose agent: takes any task no other agent matches, with the configured default model.",
    },
    profile: { enabled: true, keywords: [], exampleTasks: [], notForTasks: [], delegation: "none" },
    builtIn: true,
  });
}
