import { z } from "zod";

/** Workflow ids are spelled as agent ids are: lowercase letters, digits and hyphens. */
export const workflowIdPattern = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** Step ids and memory keys: letters, digits, `_` and `-` (a template path separates its parts with dots). */
export const stepIdPattern = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

export const failureStrategies = ["failFast", "continueOnError", "rollback"] as const;
export type FailureStrategy = (typeof failureStrategies)[number];

/** A tool call a step makes without a model: a tool's name as the model sees it, and its arguments. */
const toolCallSchema = z
  .object({
    name: z.string().min(1, "a tool name is required"),
    /** String leaves may hold templates; a string that is one template alone takes the value's own type. */
    arguments: z.record(z.string(), z.json()).optional(),
  })
  .strict();

/** What undoes a completed step under `rollback`: an agent run or a tool call, as a step's action. */
const compensationSchema = z
  .object({
    agent: z.string().min(1).optional(),
    prompt: z.string().min(1).optional(),
    tool: toolCallSchema.optional(),
  })
  .strict();

const stepSchema = z
  .object({
    id: z.string().regex(stepIdPattern, "a step id holds letters, digits, '_' and '-' only"),
    description: z.string().optional(),
    /** A registry id or an agent file path (relative to the workflow file). */
    agent: z.string().min(1).optional(),
    prompt: z.string().min(1).optional(),
    tool: toolCallSchema.optional(),
    dependsOn: z.array(z.string()).optional(),
    /** Keeps the step's result in the workflow memory under this key (`{{memory.<key>}}`). */
    saveAs: z
      .string()
      .regex(stepIdPattern, "a memory key holds letters, digits, '_' and '-' only")
      .optional(),
    compensate: compensationSchema.optional(),
  })
  .strict();

/**
 * A workflow file (`*.workflow.yaml`, `.yml` or `.json`) as written. What the schema cannot say (one action per
 * step, known dependencies, no cycle, templates that name dependencies) is checked by checkWorkflowDefinition.
 */
export const workflowDefinitionSchema = z
  .object({
    id: z.string().regex(workflowIdPattern, "a workflow id holds lowercase letters, digits and hyphens"),
    description: z.string().optional(),
    /** A JSON Schema the input must match before any step runs. */
    input: z.record(z.string(), z.json()).optional(),
    maxConcurrency: z.int().min(1).max(1000).optional(),
    failureStrategy: z.enum(failureStrategies).optional(),
    steps: z.array(stepSchema).min(1, "a workflow needs at least one step"),
    /** The workflow's output: a template string, or JSON whose string leaves are templates. */
    output: z.json().optional(),
  })
  .strict();

export type WorkflowFile = z.infer<typeof workflowDefinitionSchema>;
export type WorkflowFileStep = WorkflowFile["steps"][number];
export type WorkflowToolCall = NonNullable<WorkflowFileStep["tool"]>;
