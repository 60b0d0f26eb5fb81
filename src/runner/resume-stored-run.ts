import { CharterError } from "../foundation/charter-error.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import type { AIAgentResult } from "../session/agent-result.js";
import type { CharterEvent } from "../session/charter-event.js";
import type { SessionCheckpoint } from "../session/session-checkpoint.js";
import { openRunStore } from "../store/open-run-store.js";
import { storeLocationFromFlag } from "../store/run-store-location.js";
import type { ToolExecutionResult } from "../tools/tool-execution-result.js";
import type { RunInvocation } from "./durable-run-hooks.js";
import { loadSessionCheckpoint } from "./load-session-checkpoint.js";
import { runAgentFile } from "./run-agent.js";

export interface ResumeStoredRunOptions {
  readonly runId: string;
  /** `--approve <call-id>`: pending destructive calls to run. */
  readonly approve?: readonly string[];
  /** `--deny <call-id>`: pending destructive calls the model is told were refused. */
  readonly deny?: readonly string[];
  readonly store?: string;
  readonly runsDirectory?: string;
  readonly homeDirectory?: string;
  /** The directory of the `charter` command (configuration layer 4), as for the run itself. */
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  readonly environment?: RuntimeEnvironment;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: CharterEvent) => void;
}

const resumable = ["running", "interrupted", "awaiting_approval"] as const;

/**
 * `charter resume <run-id>` (seed 003 INV-CP-002): continues a run that was interrupted, is waiting for an
 * approval, or whose process died, from the step after its last checkpoint, under the same contract hash.
 * Committed steps are never executed again; a call that may have been in flight is re-run only when it is
 * read-only or idempotent.
 */
export async function resumeStoredRun(options: ResumeStoredRunOptions): Promise<AIAgentResult> {
  const environment = options.environment ?? systemEnvironment;
  const location = options.store ?? null;
  const store = await openRunStore({
    ...storeLocationFromFlag(options.store),
    ...(options.homeDirectory !== undefined ? { homeDirectory: options.homeDirectory } : {}),
    ...(options.processEnvironment !== undefined ? { variables: options.processEnvironment } : {}),
    environment,
  });
  let prepared: {
    invocation: RunInvocation;
    checkpoint: SessionCheckpoint;
    transcriptCreatedAt: string;
    continueFrom: { entryCount: number; headHash: string };
    contractHash: string;
    completed: Map<string, ToolExecutionResult>;
    possiblyInFlight: string | null;
  };
  try {
    const run = await store.getRun(options.runId);
    if (run === null)
      throw new CharterError("RUN_NOT_FOUND", `no run ${options.runId} in ${store.location}`, {
        details: { runId: options.runId },
      });
    if (!(resumable as readonly string[]).includes(run.status)) {
      throw new CharterError(
        "RUN_NOT_RESUMABLE",
        `run ${options.runId} is ${run.status}: only ${resumable.join(", ")} runs resume`,
        {
          details: { runId: options.runId, status: run.status },
        },
      );
    }
    const document = await loadSessionCheckpoint(store, options.runId);
    if (document === null) {
      throw new CharterError(
        "RUN_NOT_RESUMABLE",
        `run ${options.runId} has no checkpoint yet (it stopped before its first COMMIT)`,
        {
          details: { runId: options.runId },
        },
      );
    }
    const calls = document.kind === "before_execute" ? document.state.callsToExecute : [];
    const completed = new Map<string, ToolExecutionResult>();
    if (calls.length > 0) {
      const ids = new Set(calls.map((call) => call.id));
      for (const stored of await store.readToolResults(options.runId)) {
        if (stored.turn === document.turn && ids.has(stored.callId))
          completed.set(stored.callId, stored.result as ToolExecutionResult);
      }
    }
    // Calls run one at a time, so at most one was in flight: the first without a recorded result. A run stopped
    // for an approval stopped before that call started.
    const firstOpen = calls.find((call) => !completed.has(call.id));
    prepared = {
      invocation: document.invocation,
      checkpoint: document,
      transcriptCreatedAt: run.header.created_at,
      continueFrom: { entryCount: run.entryCount, headHash: run.headHash },
      contractHash: run.contractHash,
      completed,
      possiblyInFlight: run.status === "awaiting_approval" ? null : (firstOpen?.id ?? null),
    };
    await store.reopenRun(options.runId, { from: [...resumable] });
  } finally {
    await store.close();
  }
  const decisions = new Map<string, "approve" | "deny">();
  for (const id of options.approve ?? []) decisions.set(id, "approve");
  for (const id of options.deny ?? []) decisions.set(id, "deny");
  return runAgentFile(
    {
      agentPath: prepared.invocation.agent_path,
      prompt: "",
      cwd: prepared.invocation.cwd,
      set: prepared.invocation.set,
      ...(prepared.invocation.config_path !== null ? { configPath: prepared.invocation.config_path } : {}),
      ...(location !== null ? { store: location } : {}),
      ...(options.runsDirectory !== undefined ? { runsDirectory: options.runsDirectory } : {}),
      ...(options.homeDirectory !== undefined ? { homeDirectory: options.homeDirectory } : {}),
      ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
      ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
      environment,
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(options.onEvent !== undefined ? { onEvent: options.onEvent } : {}),
    },
    {
      runId: options.runId,
      checkpoint: prepared.checkpoint,
      transcriptCreatedAt: prepared.transcriptCreatedAt,
      continueFrom: prepared.continueFrom,
      contractHash: prepared.contractHash,
      decisions,
      completed: prepared.completed,
      possiblyInFlight: prepared.possiblyInFlight,
    },
  );
}
