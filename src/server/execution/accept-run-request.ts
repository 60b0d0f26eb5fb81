import type { StoredRunEvent } from "../../store/run-event-records.js";
import type { RunExecutionContext } from "./run-execution-context.js";
import type { RunRequest } from "./run-request.js";

/**
 * Stores a run the API accepted, for its tenant: the request (what any worker needs to execute it, redacted with the
 * server's secrets) and its REQUESTED event, in one transaction. A dispatcher calls it before queueing the run, so
 * that a run is durable, and its lifecycle readable, from the moment it is accepted.
 */
export async function acceptRunRequest(
  request: RunRequest,
  context: Pick<RunExecutionContext, "store" | "events" | "redactor">,
): Promise<StoredRunEvent> {
  const redact = <T>(value: T): T =>
    context.redactor === undefined ? value : (context.redactor.redactValue(value) as T);
  const stored = await context.store.forTenant(request.tenantId).createRunRequest({
    event: {
      runId: request.runId,
      requestId: request.requestId,
      userId: request.userId,
      correlationId: request.correlationId,
      conversationId: request.conversationId,
      data: redact({
        agent: request.agent,
        role: request.role,
        metadata: request.metadata,
        ...(request.kind !== undefined ? { kind: request.kind } : {}),
      }),
    },
    request: redact(request),
    createdAt: request.requestedAt,
  });
  context.events?.publish(stored);
  return stored;
}
