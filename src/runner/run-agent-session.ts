import { join } from "node:path";
import type { AgentDefinition as AgentFile } from "../config/agent-file.js";
import type { AgentSettings } from "../config/agent-settings-schema.js";
import type { AIAgentResult } from "../session/agent-result.js";
import { createStoreTranscriptWriter } from "../store/store-transcript-writer.js";
import { createJsonlTranscriptWriter } from "../transcript/jsonl-transcript-writer.js";
import { createTeeTranscriptWriter } from "../transcript/tee-transcript-writer.js";
import { createDurableRunHooks } from "./durable-run-hooks.js";
import { guardToolCalls } from "./guard-tool-calls.js";
import type { PreparedAgent } from "./prepare-agent.js";
import { readAttachmentData } from "./read-attachment-data.js";
import { readPendingApprovals } from "./read-pending-approvals.js";
import type { ResumeRequest } from "./run-agent-options.js";
import type { RunContext } from "./run-context.js";
import { currentRunOwner, defaultHeartbeatIntervalMilliseconds } from "./run-owner.js";
import { admitToolCalls } from "./tool-call-admission.js";
import { restrictToolClasses } from "./tool-permissions.js";

/**
 * The session of one agent whose contract has passed every preflight check: its transcript (the run directory's
 * JSONL beside the store, or the store alone for a resume), the durable hooks that checkpoint each turn, the tool
 * executor wrapped guard by guard (admission, approvals, the run's tool classes, durability), the owner's
 * heartbeat, and the run itself. `onStarted` is called once the session is set up, just before the heartbeat
 * starts: from then on a failure belongs to the run, and is no longer stored as a preflight failure.
 */
export async function runAgentSession(
  context: RunContext,
  agent: AgentFile,
  prepared: PreparedAgent,
  run: {
    readonly runId: string;
    readonly prompt: string;
    readonly signal: AbortSignal | undefined;
    readonly topLevel: boolean;
    readonly parentRunId: string | null;
    /** The top-level run's resume, already checked and reopened; null for a new run and every sub-agent. */
    readonly resume: ResumeRequest | null;
    readonly overrides: AgentSettings;
    readonly destructiveTools: readonly string[];
    readonly onStarted: () => void;
  },
): Promise<AIAgentResult> {
  const { environment, redactor } = context;
  const defaults = context.loaded.configuration.defaults;
  const { runId, prompt, signal, topLevel, parentRunId, resume, overrides } = run;
  const runDirectory = join(context.runsDirectory, runId);
  const storeWriter = createStoreTranscriptWriter({
    store: context.store,
    agentId: agent.id,
    tenantId: context.options.tenantId ?? null,
    correlationId: context.options.correlationId ?? null,
    parentRunId,
    owner: currentRunOwner(),
    mode: resume === null ? "create" : "resume",
  });
  const durable = createDurableRunHooks({
    store: context.store,
    writer: storeWriter,
    runId,
    invocation: context.invocation,
    redactor,
    tools: {
      manifest: prepared.contract.tool_manifest,
      destructiveTools: run.destructiveTools,
    },
    ...(resume !== null
      ? { resumedFrom: resume.checkpoint, storedResults: resume.completed.map((call) => call.result) }
      : {}),
  });
  const permissions = context.options.toolPermissions;
  const guard = {
    manifest: prepared.contract.tool_manifest,
    destructiveTools: run.destructiveTools,
    // A run whose permissions exclude pre-approvals waits for a human's decision on every destructive call.
    preApprovedTools:
      permissions !== undefined && !permissions.preApprovedToolsAllowed
        ? []
        : (overrides.approvedTools ?? agent.settings.approvedTools ?? defaults.approvedTools ?? []),
    ...(resume !== null
      ? {
          decisions: resume.decisions,
          completed: resume.completed,
          possiblyInFlight: resume.possiblyInFlight,
        }
      : {}),
  };
  run.onStarted();
  // Who runs the run says it is alive on a timer (never per turn): `runs list` tells a run whose process is
  // gone from one still running by its owner, and by this heartbeat when the owner is on another host.
  const owner = currentRunOwner();
  const heartbeat = setInterval(
    () => void context.store.heartbeatRun(runId, owner).catch(() => undefined),
    environment.heartbeatIntervalMilliseconds ?? defaultHeartbeatIntervalMilliseconds,
  );
  heartbeat.unref();
  try {
    const history = topLevel && resume === null ? (context.options.history ?? []) : [];
    const { result } = await prepared.run({
      prompt,
      ...(history.length > 0 ? { history } : {}),
      runId,
      // A resumed run continues in the store only: its run directory holds the run as first written.
      transcriptWriter:
        resume === null
          ? createTeeTranscriptWriter([createJsonlTranscriptWriter(runDirectory), storeWriter])
          : storeWriter,
      checkpoint: durable.checkpoint,
      // Recorded in PRECHECK: who the run is for, and that its stored records are bound to its chain.
      runIdentity: {
        tenant_id: context.options.tenantId ?? null,
        correlation_id: context.options.correlationId ?? null,
        bound_records: 1,
      },
      // The durable layer outside the guard: the guard's own answers are stored like any result.
      // A call the run's permissions exclude is refused before it could ask for an approval.
      wrapToolExecutor: (unadmitted) => {
        // A call that would run is admitted last (after its permission and approval), so only calls that run count.
        const admission = context.options.toolCallAdmission;
        const executor =
          admission === undefined
            ? unadmitted
            : admitToolCalls(unadmitted, {
                manifest: guard.manifest,
                destructiveTools: guard.destructiveTools,
                admission,
              });
        return durable.wrapToolExecutor(
          permissions === undefined
            ? guardToolCalls(executor, guard)
            : restrictToolClasses(guardToolCalls(executor, guard), {
                manifest: guard.manifest,
                destructiveTools: guard.destructiveTools,
                allowedClasses: permissions.allowedClasses,
              }),
        );
      },
      beforeClose: durable.finish,
      ...(resume !== null
        ? {
            resume: {
              checkpoint: resume.checkpoint,
              transcriptCreatedAt: resume.transcriptCreatedAt,
              continueFrom: resume.continueFrom,
              attachmentData: await readAttachmentData(context.store, runId, resume.checkpoint),
            },
          }
        : {}),
      ...(signal !== undefined ? { signal } : {}),
      ...(topLevel && context.options.onTransition !== undefined
        ? { onTransition: context.options.onTransition }
        : {}),
      ...(topLevel && context.options.onEvent !== undefined ? { onEvent: context.options.onEvent } : {}),
    });
    return {
      ...result,
      transcript: { ...result.transcript, directory: resume === null ? runDirectory : null },
      ...(topLevel && result.error?.code === "APPROVAL_REQUIRED"
        ? { pendingApprovals: await readPendingApprovals(context.store, runId) }
        : {}),
    };
  } finally {
    clearInterval(heartbeat);
  }
}
