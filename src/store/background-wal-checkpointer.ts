import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** What one checkpoint did, as `PRAGMA wal_checkpoint` reports it. */
export interface WalCheckpointResult {
  /** 1 when another connection held a lock the checkpoint needed and it stopped early; 0 otherwise. */
  readonly busy: number;
  /** Frames in the WAL when the checkpoint ran. */
  readonly walFrames: number;
  /** Frames copied back into the database so far (this checkpoint and earlier ones of the same WAL). */
  readonly checkpointedFrames: number;
}

export interface BackgroundWalCheckpointerOptions {
  /** The database file (WAL mode). */
  readonly path: string;
  /** Write transactions between two checkpoint requests. */
  readonly commitsPerCheckpoint: number;
  /** Called on the caller's thread after each checkpoint the worker ran. */
  readonly onCheckpoint?: (result: WalCheckpointResult) => void;
}

/**
 * Copies a SQLite database's WAL back into the database on a worker thread of its own, with its own connection.
 * The copy, and above all its two fsyncs, then no longer stall the thread that commits (measured on this
 * 2-vCPU machine: 87 -> 60 µs per COMMIT of a durable turn; see docs/store.md "Durability").
 */
export interface BackgroundWalCheckpointer {
  /**
   * Tells it a write transaction committed; every `commitsPerCheckpoint` it asks the worker for a checkpoint.
   * Never throws: it runs after the COMMIT, which must not look failed.
   */
  committed(): void;
  /** Stops the worker once it has closed its connection (a checkpoint under way finishes first). */
  close(): Promise<void>;
}

// The worker is this CommonJS source evaluated in a new thread (`eval: true`), so that it runs the same whether
// Charter runs compiled or from its TypeScript sources (under vitest), and it loads the caller's better-sqlite3.
// A PASSIVE checkpoint never waits for a lock and never blocks the committing connection: it copies what it can.
const workerSource = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driverPath);
const database = new Database(workerData.path, { fileMustExist: true });
parentPort.on("message", (message) => {
  if (message === "close") {
    database.close();
    parentPort.close();
    return;
  }
  let result = { busy: 1, log: -1, checkpointed: -1 };
  try {
    result = database.pragma("wal_checkpoint(PASSIVE)")[0];
  } catch {}
  Atomics.store(workerData.inFlight, 0, 0);
  parentPort.postMessage(result);
});
`;

/**
 * Starts checkpointing `path` in the background. The worker starts at the first request (a short run never
 * starts one), never keeps the process alive, and is given up (the committing connection's own automatic
 * checkpoints still bound the WAL) if it fails.
 */
export function createBackgroundWalCheckpointer(
  options: BackgroundWalCheckpointerOptions,
): BackgroundWalCheckpointer {
  const commitsPerCheckpoint = Math.max(1, Math.trunc(options.commitsPerCheckpoint));
  let worker: Worker | null = null;
  let commitsSinceRequest = 0;
  // Set by the caller when it asks for a checkpoint, cleared by the worker when it is done. Shared memory, not a
  // message: a caller that commits in a loop of promises never returns to its event loop to receive one.
  const inFlight = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  let failed = false;
  let closing: Promise<void> | null = null;

  function start(): Worker {
    const started = new Worker(workerSource, {
      eval: true,
      workerData: {
        path: options.path,
        driverPath: createRequire(import.meta.url).resolve("better-sqlite3"),
        inFlight,
      },
    });
    started.on("message", (message: { busy: number; log: number; checkpointed: number }) => {
      options.onCheckpoint?.({
        busy: message.busy,
        walFrames: message.log,
        checkpointedFrames: message.checkpointed,
      });
    });
    // A worker that cannot open the database or dies is not replaced: checkpoints fall back to the committing
    // connection's automatic ones, which is how SQLite works without this.
    started.on("error", () => {
      failed = true;
    });
    started.on("exit", () => {
      if (closing === null) failed = true;
      worker = null;
    });
    // After the listeners: adding a "message" listener references the worker again.
    started.unref();
    return started;
  }

  return {
    committed() {
      commitsSinceRequest++;
      if (commitsSinceRequest < commitsPerCheckpoint || failed || closing !== null) return;
      if (Atomics.load(inFlight, 0) !== 0) return;
      commitsSinceRequest = 0;
      try {
        worker ??= start();
      } catch {
        // Where threads cannot start (a restricted runtime), the committed transaction must not look failed:
        // checkpoints stay with the committing connection.
        failed = true;
        return;
      }
      Atomics.store(inFlight, 0, 1);
      worker.postMessage("checkpoint");
    },

    close() {
      closing ??= new Promise<void>((resolve) => {
        const running = worker;
        if (running === null) {
          resolve();
          return;
        }
        // Referenced while closing, so that an awaited close is not cut short by the process running out of work.
        running.ref();
        running.once("exit", () => resolve());
        running.postMessage("close");
      });
      return closing;
    },
  };
}
