import type { FastifyPluginAsync } from "fastify";
import type { RunStore } from "../../store/run-store.js";

export interface HealthRoutesOptions {
  readonly store: RunStore;
}

/** A run id no run has (ids never contain spaces): reading it is the cheapest query that reaches the database. */
const probeRunId = "readiness probe";

/**
 * `GET /healthz`: the process serves requests. `GET /readyz`: it can also reach its run store (503 when it
 * cannot, so a load balancer sends requests elsewhere). Neither needs credentials.
 */
export const healthRoutes: FastifyPluginAsync<HealthRoutesOptions> = async (app, { store }) => {
  app.get(
    "/healthz",
    {
      config: { public: true },
      schema: {
        summary: "The process is up",
        tags: ["health"],
        security: [],
        response: {
          200: {
            type: "object",
            required: ["status"],
            properties: { status: { type: "string", enum: ["ok"] } },
          },
        },
      },
    },
    async () => ({ status: "ok" as const }),
  );

  app.get(
    "/readyz",
    {
      config: { public: true },
      schema: {
        summary: "The process can reach its run store",
        tags: ["health"],
        security: [],
        response: {
          200: readiness,
          503: readiness,
        },
      },
    },
    async (_request, reply) => {
      try {
        await store.getRun(probeRunId);
        return { status: "ready" as const, store: { backend: store.backend, reachable: true } };
      } catch {
        return reply
          .status(503)
          .send({ status: "not_ready" as const, store: { backend: store.backend, reachable: false } });
      }
    },
  );
};

const readiness = {
  type: "object",
  required: ["status", "store"],
  properties: {
    status: { type: "string", enum: ["ready", "not_ready"] },
    store: {
      type: "object",
      required: ["backend", "reachable"],
      properties: { backend: { type: "string" }, reachable: { type: "boolean" } },
    },
  },
} as const;
