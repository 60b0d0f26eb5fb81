import type { RunEventType, StoredRunEvent } from "../../store/run-event-records.js";
import type { RunStore } from "../../store/run-store.js";
import type { RunExecutionContext } from "./run-execution-context.js";
import type { RunRequest } from "./run-request.js";

/**
 * Appends one lifecycle event of a request's run, stamped with the request's ids (request, user, correlation,
 * conversation), and tells the process's listeners (`GET /v1/runs/:id/events` streams): every lifecycle event a
 * server execution records goes through here, so that none is stored with other ids or stored without being
 * published. `data` is stored as given: the caller redacts it.
 */
export async function appendRequestEvent(
  store: RunStore,
  request: RunRequest,
  context: Pick<RunExecutionContext, "events">,
  type: RunEventType,
  data: Readonly<Record<string, unknown>>,
): Promise<StoredRunEvent> {
  const stored = await store.appendRunEvent({
    runId: request.runId,
    requestId: request.requestId,
    userId: request.userId,
    correlationId: request.correlationId,
    conversationId: request.conversationId,
    type,
    data,
  });
  context.events?.publish(stored);
  return stored;
}
