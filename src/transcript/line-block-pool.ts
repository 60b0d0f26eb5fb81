import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { type LineBlockTask, type LineBlockTaskResult, runLineBlockTask } from "./line-block-task.js";

/**
 * Runs one verification's tasks on worker threads, or inline on the calling thread. Either way a task's result is
 * the same (a task is a pure function of its input and the files it reads), so which one runs a task changes
 * how long verification takes, never its report.
 */
export interface LineBlockPool {
  /** Worker threads; 0 when tasks run inline. */
  readonly workers: number;
  /**
   * Runs a task; resolves null when a worker could not (it crashed, or the task threw): the caller then does
   * that part of the work itself, the way it would without workers, so that a fault surfaces as it would there.
   */
  run(task: LineBlockTask, transfer?: readonly ArrayBuffer[]): Promise<LineBlockTaskResult | null>;
  /** Ends this verification's use of the pool: its tasks not yet started resolve null. */
  close(): void;
}

/** Below this much work, handing it to threads costs more than it saves. */
export const parallelVerificationMinimumBytes = 8 << 20;
const maximumWorkers = 4;
/** Idle workers are kept this long, so that verifying several runs in a row pays their start (and JIT warm-up) once. */
const idleMilliseconds = 10_000;

// The worker runs the compiled file beside this module. Run from the TypeScript sources (as under vitest) there
// is none, and tasks run inline.
const workerUrl = new URL("./line-block-worker.js", import.meta.url);

/**
 * A pool for `workBytes` of work: worker threads when the work is large enough, the machine has more than one
 * core, and the compiled worker exists; otherwise inline.
 */
export function createLineBlockPool(workBytes: number): LineBlockPool {
  const workers = Math.min(availableParallelism(), maximumWorkers);
  if (workBytes < parallelVerificationMinimumBytes || workers < 2 || !existsSync(fileURLToPath(workerUrl))) {
    return inlinePool;
  }
  sharedThreads ??= createThreads(workers);
  return sharedThreads.session();
}

const inlinePool: LineBlockPool = {
  workers: 0,
  async run(task) {
    try {
      return runLineBlockTask(task);
    } catch {
      return null;
    }
  },
  close() {},
};

interface Pending {
  readonly session: object;
  readonly task: LineBlockTask;
  readonly transfer: readonly ArrayBuffer[];
  readonly resolve: (result: LineBlockTaskResult | null) => void;
}

interface Threads {
  session(): LineBlockPool;
}

let sharedThreads: Threads | undefined;

/**
 * Worker threads shared by every verification in the process, one task at a time each. They never keep the
 * process alive: a worker is referenced only while it runs a task, and all of them stop after a while idle.
 */
function createThreads(count: number): Threads {
  const queue: Pending[] = [];
  const idle: Worker[] = [];
  const running = new Map<Worker, Pending>();
  const threads: Worker[] = [];
  let idleTimer: NodeJS.Timeout | undefined;

  function dispatch(): void {
    while (queue.length > 0 && idle.length > 0) {
      const worker = idle.pop() as Worker;
      const pending = queue.shift() as Pending;
      running.set(worker, pending);
      worker.ref();
      worker.postMessage({ task: pending.task }, [...pending.transfer]);
    }
    clearTimeout(idleTimer);
    if (running.size === 0 && queue.length === 0) {
      idleTimer = setTimeout(stop, idleMilliseconds);
      idleTimer.unref();
    }
  }

  function finish(worker: Worker, result: LineBlockTaskResult | null): void {
    const pending = running.get(worker);
    running.delete(worker);
    worker.unref();
    pending?.resolve(result);
  }

  let stopped = false;
  function stop(): void {
    if (stopped) return;
    stopped = true;
    if (sharedThreads === pool) sharedThreads = undefined;
    for (const pending of queue.splice(0)) pending.resolve(null);
    for (const worker of threads) void worker.terminate();
  }

  for (let index = 0; index < count; index++) {
    const worker = new Worker(workerUrl);
    worker.unref();
    threads.push(worker);
    idle.push(worker);
    worker.on("message", (message: { readonly result?: LineBlockTaskResult }) => {
      finish(worker, message.result ?? null);
      idle.push(worker);
      dispatch();
    });
    // A worker that dies takes its task with it (resolved null, for the caller to redo); the others are stopped
    // too, and the next verification starts afresh.
    worker.on("error", () => {
      finish(worker, null);
      stop();
    });
    worker.on("exit", () => {
      finish(worker, null);
      stop();
    });
  }

  const pool: Threads = {
    session() {
      const session = {};
      return {
        workers: count,
        run(task, transfer = []) {
          if (sharedThreads !== pool) return Promise.resolve(null);
          return new Promise((resolve) => {
            queue.push({ session, task, transfer, resolve });
            dispatch();
          });
        },
        close() {
          for (let index = queue.length - 1; index >= 0; index--) {
            const pending = queue[index] as Pending;
            if (pending.session !== session) continue;
            queue.splice(index, 1);
            pending.resolve(null);
          }
          dispatch();
        },
      };
    },
  };
  return pool;
}
