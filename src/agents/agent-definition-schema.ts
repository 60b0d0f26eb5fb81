import { z } from "zod";
import { agentIdSchema, agentSettingsSchema, delegationModeSchema } from "../config/agent-settings-schema.js";

/** Registry ids that name something else: `charter run auto` selects an agent. */
export const reservedAgentIds: readonly string[] = ["auto"];

const phrases = z.array(z.string().trim().min(1));

/**
 * A complete agent profile as the registry holds it (seed 003 `AgentProfileSchema`): every definition passes this
 * before it is registered, whether it was read from a file or built in code.
 */
export const agentDefinitionSchema = z
  .object({
    id: agentIdSchema.refine((id) => !reservedAgentIds.includes(id), {
      error: (issue) =>
        `"${String(issue.input)}" is reserved (charter run auto selects an agent); choose another id`,
    }),
    path: z.string().min(1),
    directory: z.string().min(1),
    systemPrompt: z.string(),
    settings: agentSettingsSchema,
    profile: z
      .object({
        enabled: z.boolean(),
        keywords: phrases,
        exampleTasks: phrases,
        notForTasks: phrases,
        delegation: delegationModeSchema,
      })
      .strict(),
    builtIn: z.boolean(),
  })
  .strict();
