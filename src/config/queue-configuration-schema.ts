import { z } from "zod";

/** Every key of `queues.<name>`, each optional in one layer; the merged configuration requires them. */
export const queueShape = {
  /** How many calls of the queue's tools may run at once, across the process. */
  concurrent: z.number().int().positive().optional(),
};

/** One named tool queue of the merged configuration. */
export const queueSchema = z
  .object(queueShape)
  .strict()
  .superRefine((queue, context) => {
    if (queue.concurrent === undefined) {
      context.addIssue({ code: "custom", path: ["concurrent"], message: "a queue needs concurrent" });
    }
  })
  .transform((queue) => ({ concurrent: queue.concurrent as number }));

export type QueueConfiguration = z.output<typeof queueSchema>;

/** A queue named by a server or REST tool that `queues` does not define. */
export interface QueueReferenceIssue {
  readonly path: readonly string[];
  readonly message: string;
}

/**
 * The `queue` references of the merged configuration that name no queue, for a `superRefine` on the whole
 * configuration: a typo in a queue name must not silently leave a tool unbounded.
 */
export function queueReferenceIssues(configuration: {
  readonly queues: Readonly<Record<string, unknown>>;
  readonly mcpServers?: Readonly<Record<string, { readonly queue?: string | null }>>;
  readonly restTools?: Readonly<Record<string, { readonly queue?: string | null }>>;
}): QueueReferenceIssue[] {
  const issues: QueueReferenceIssue[] = [];
  const sections = [
    ["mcpServers", configuration.mcpServers ?? {}],
    ["restTools", configuration.restTools ?? {}],
  ] as const;
  for (const [section, entries] of sections) {
    for (const [name, entry] of Object.entries(entries)) {
      const queue = entry.queue;
      if (queue == null || Object.hasOwn(configuration.queues, queue)) continue;
      const known = Object.keys(configuration.queues);
      issues.push({
        path: [section, name, "queue"],
        message: `no queue named "${queue}" (queues: ${known.length === 0 ? "none" : known.join(", ")})`,
      });
    }
  }
  return issues;
}
