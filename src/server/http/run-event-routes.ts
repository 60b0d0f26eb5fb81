import type { FastifyPluginAsync } from "fastify";
import { CharterError } from "../../foundation/charter-error.js";
import { type StoredRunEvent, settledRunEventTypes } from "../../store/run-event-records.js";
import type { RunStore } from "../../store/run-store.js";
import type { RunEventHub } from "../execution/run-event-hub.js";
import { watchRunEvents } from "../execution/watch-run-events.js";
import type { TenantScopeViolations } from "../identity/tenant-scope-violations.js";
import { errorResponseOf } from "./error-response.js";
import { authenticatedErrors, errorReference } from "./error-schema.js";
import { openEventStream } from "./event-stream.js";
import { refuseRunOutsideTenant } from "./refuse-run-outside-tenant.js";
import { identityOf } from "./request-identity.js";
import { runIdParams } from "./run-id-params.js";

export interface RunEventRoutesOptions {
  readonly store: RunStore;
  readonly violations: TenantScopeViolations;
  /** This process's event hub (the dispatcher's): its runs' events are heard at once; others are polled. */
  readonly events?: RunEventHub;
  /** How often the store is read for events stored by another process; default 1 s. */
  readonly pollMilliseconds?: number;
}

/**
 * A lifecycle event as the stream sends it (the `data` of one SSE event): the fields every event carries, in the
 * names the lifecycle documents (`task_id` is the run id), then what the event says.
 */
export function runEventWire(event: StoredRunEvent): Record<string, unknown> {
  return {
    ...event.data,
    type: event.type,
    sequence: event.sequence,
    task_id: event.runId,
    request_id: event.requestId,
    tenant_id: event.tenantId,
    user_id: event.userId,
    correlation_id: event.correlationId,
    conversation_id: event.conversationId,
    created_at: new Date(event.createdAt).toISOString(),
  };
}

/** `Last-Event-ID`: the sequence of the last event the client has (0 or absent: from the start). */
function afterSequenceOf(header: string | string[] | undefined): number {
  if (header === undefined) return 0;
  const text = Array.isArray(header) ? (header[0] ?? "") : header;
  if (/^\d{1,15}$/.test(text.trim())) return Number(text.trim());
  throw new CharterError(
    "REQUEST_INVALID",
    "Last-Event-ID must be the id (sequence number) of an event of this stream",
    {
      details: {
        location: "headers",
        issues: [{ path: "headers/last-event-id", message: "not an event id of this stream" }],
      },
    },
  );
}

/**
 * `GET /v1/runs/:id/events`: the run's lifecycle events as server-sent events, from the start (or after
 * `Last-Event-ID`), live until the run's COMPLETED or FAILED event, then the stream ends. Events of runs this
 * process executes arrive at once (the dispatcher's hub); events stored by another process are found by reading
 * the store. Another tenant's run is the same 404 as a missing one, and a recorded violation.
 */
export const runEventRoutes: FastifyPluginAsync<RunEventRoutesOptions> = async (app, options) => {
  const { store, violations } = options;
  // Open streams end when the server closes, rather than holding its close until their runs finish.
  const closing = new AbortController();
  app.addHook("preClose", async () => closing.abort());

  app.get<{ Params: { id: string } }>(
    "/v1/runs/:id/events",
    {
      config: { permission: "runs.read" },
      schema: {
        summary: "The run's lifecycle events, live (server-sent events)",
        description:
          "`text/event-stream`: one event per lifecycle event (`id` its sequence, `event` its type, `data` the event as JSON), from the start or after `Last-Event-ID`, until COMPLETED or FAILED.",
        tags: ["runs"],
        params: runIdParams,
        headers: {
          type: "object",
          properties: {
            "last-event-id": {
              type: "string",
              description: "The id of the last event received: the stream continues after it.",
            },
          },
        },
        response: {
          204: {
            description: "The run has ended and the client has its last event: nothing more will come.",
            type: "null",
          },
          200: {
            description: "The event stream.",
            content: { "text/event-stream": { schema: { type: "string" } } },
          },
          404: errorReference,
          ...authenticatedErrors,
        },
      },
    },
    async (request, reply) => {
      const { tenantId } = identityOf(request);
      const runId = request.params.id;
      const afterSequence = afterSequenceOf(request.headers["last-event-id"]);
      const tenantStore = store.forTenant(tenantId);
      // Only runs the server accepted have lifecycle events; any other id is answered as a missing run.
      const accepted = await tenantStore.getRunRequest(runId);
      if (accepted === null) {
        return refuseRunOutsideTenant(request, store, violations, runId);
      }
      // A client that has the run's last event (an EventSource reconnecting after the stream ended) is told, with
      // 204, that there is nothing more: the standard answer that stops an EventSource from reconnecting.
      if (settledRunEventTypes.includes(accepted.state) && afterSequence >= accepted.lastSequence) {
        return reply.status(204).send();
      }
      const stream = openEventStream(reply, {}, closing.signal);
      try {
        for await (const event of watchRunEvents(tenantStore, runId, {
          afterSequence,
          signal: stream.signal,
          ...(options.events !== undefined ? { events: options.events } : {}),
          ...(options.pollMilliseconds !== undefined ? { pollMilliseconds: options.pollMilliseconds } : {}),
        })) {
          await stream.send({
            id: String(event.sequence),
            event: event.type,
            data: JSON.stringify(runEventWire(event)),
          });
        }
      } catch (error) {
        // The headers are sent: a failure (the store lost) ends the stream with an error event the client can read.
        await stream.send({ event: "error", data: JSON.stringify(errorResponseOf(error).body) });
      } finally {
        stream.end();
      }
    },
  );
};
