import { parentPort } from "node:worker_threads";
import { type LineBlockTask, runLineBlockTask } from "./line-block-task.js";

/**
 * The entry point of a verification worker thread (started by `createLineBlockPool` from the compiled file):
 * runs each task it is sent and posts back its result, or the error it threw.
 */
parentPort?.on("message", (message: { readonly id: number; readonly task: LineBlockTask }) => {
  try {
    parentPort?.postMessage({ id: message.id, result: runLineBlockTask(message.task) });
  } catch (error) {
    parentPort?.postMessage({
      id: message.id,
      error: error instanceof Error ? error.message : String(error),
    });
  }
});
