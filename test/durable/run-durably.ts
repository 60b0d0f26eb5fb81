import { createDurableRunHooks } from "../../src/runner/durable-run-hooks.js";
import type { PreparedAgent } from "../../src/runner/prepare-agent.js";
import type { SessionCheckpoint } from "../../src/session/session-checkpoint.js";
import type { RunStore } from "../../src/store/run-store.js";
import { createStoreTranscriptWriter } from "../../src/store/store-transcript-writer.js";

/** The invocation the in-process durable tests record (no agent file is read back from it). */
export const testInvocation = { agent_path: "agent.md", config_path: null, cwd: "/", set: [] };

/**
 * Runs a prepared agent durably in `store`, wired as the CLI wires a run (a store transcript writer and the
 * durable run hooks); returns the result and every checkpoint the session handed over, in order. With
 * `classes`, the hooks learn the tools' idempotency classes from the contract, as the CLI's do.
 */
export async function runDurably(
  agent: PreparedAgent,
  store: RunStore,
  runId: string,
  options: { readonly agentId: string; readonly classes?: boolean },
) {
  const writer = createStoreTranscriptWriter({ store, agentId: options.agentId });
  const hooks = createDurableRunHooks({
    store,
    writer,
    runId,
    invocation: testInvocation,
    ...(options.classes === true ? { tools: { manifest: agent.contract.tool_manifest } } : {}),
  });
  const handed: SessionCheckpoint[] = [];
  const { result } = await agent.run({
    prompt: "start",
    runId,
    transcriptWriter: writer,
    checkpoint: async (checkpoint) => {
      handed.push(checkpoint);
      await hooks.checkpoint(checkpoint);
    },
    wrapToolExecutor: hooks.wrapToolExecutor,
    beforeClose: hooks.finish,
  });
  return { result, handed };
}

/** The store, seen through a copy that notes each batch appended: its checkpoint's kind and tool results. */
export function observeTransactions(store: RunStore) {
  const transactions: { checkpoint: string | null; toolResults: number }[] = [];
  const appendCommit = store.appendCommit.bind(store);
  const observed: RunStore = Object.assign(Object.create(store) as RunStore, {
    appendCommit: (batch: Parameters<RunStore["appendCommit"]>[0]) => {
      const kind = (batch.checkpoint?.document as { kind?: string } | undefined)?.kind ?? null;
      transactions.push({ checkpoint: kind, toolResults: batch.toolResults?.length ?? 0 });
      return appendCommit(batch);
    },
  });
  return { observed, transactions };
}
