import { createToolQueue, type ToolQueue } from "./tool-queue.js";

/** The `queues` section: each name with its bound. */
export type ToolQueueDefinitions = Readonly<Record<string, { readonly concurrent: number }>>;

/** New queues for the definitions: bounds shared only by the holders of this map. */
export function createToolQueues(definitions: ToolQueueDefinitions): ReadonlyMap<string, ToolQueue> {
  return new Map(
    Object.entries(definitions).map(([name, { concurrent }]) => [name, createToolQueue(name, concurrent)]),
  );
}

// Keyed by name and bound: two configurations that agree on a queue share it; one that changes the bound
// gets a queue of its own rather than silently resizing another run's.
const processQueues = new Map<string, ToolQueue>();

/**
 * The process-wide queues for the definitions: every run in this process that names the same queue with the
 * same bound waits in the same line, which is what makes `concurrent` a bound across the process.
 */
export function processToolQueues(definitions: ToolQueueDefinitions): ReadonlyMap<string, ToolQueue> {
  const queues = new Map<string, ToolQueue>();
  for (const [name, { concurrent }] of Object.entries(definitions)) {
    const key = `${name}\u0000${concurrent}`;
    let queue = processQueues.get(key);
    if (queue === undefined) {
      queue = createToolQueue(name, concurrent);
      processQueues.set(key, queue);
    }
    queues.set(name, queue);
  }
  return queues;
}
