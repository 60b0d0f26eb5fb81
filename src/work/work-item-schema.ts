import { z } from "zod";

/** The seed's defaults for a work item's limits. */
export const workItemDefaults = {
  max_files: 10,
  max_tool_ops: 50,
  max_delta_size: 100,
  timeout_ms: 300_000,
} as const;

const positiveCount = z.number().int().positive();

// Ids name a replay script file and a commit message: letters, digits, `.`, `_` and `-`, starting with a letter
// or digit.
const workItemId = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/,
    "use 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit",
  );

/** A work item as written in its file (YAML or JSON), with the seed's field names. */
export const workItemSchema = z.strictObject({
  id: workItemId,
  /** A registry agent id, or an agent file path relative to the work item file. */
  agent_id: z.string().min(1),
  /** What to do: the agent's task. */
  description: z.string().min(1),
  dependencies: z.array(workItemId).default([]),
  constraints: z
    .strictObject({
      max_files: positiveCount.default(workItemDefaults.max_files),
      max_tool_ops: positiveCount.default(workItemDefaults.max_tool_ops),
      max_delta_size: positiveCount.default(workItemDefaults.max_delta_size),
      timeout_ms: positiveCount.default(workItemDefaults.timeout_ms),
    })
    .default({ ...workItemDefaults }),
  budget: z
    .strictObject({
      time_estimate_ms: z.number().int().nonnegative(),
      complexity: z.enum(["low", "medium", "high"]),
    })
    .optional(),
  input_files: z.array(z.string().min(1)).optional(),
  output_files: z.array(z.string().min(1)).optional(),
  test_command: z.string().min(1).optional(),
  /** Offers `workspace__run_command` to the agent. */
  allow_commands: z.boolean().default(false),
});

/** A validated work item, every default applied. */
export type WorkItem = z.output<typeof workItemSchema>;
