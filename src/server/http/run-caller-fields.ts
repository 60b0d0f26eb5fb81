import type { FastifyRequest } from "fastify";
import type { RunDecisionRequest } from "../execution/run-request.js";
import { identityOf } from "./request-identity.js";

/** What a run's request (and a decision on its calls) records of who asked, through which HTTP request. */
export type RunCallerFields = Pick<
  RunDecisionRequest,
  "runId" | "requestId" | "tenantId" | "userId" | "role" | "correlationId"
>;

/** The run's id with the HTTP request and the caller asking for it: the run executes under that identity. */
export function runCallerFields(
  request: FastifyRequest,
  runId: string,
  correlationId: string,
): RunCallerFields {
  const identity = identityOf(request);
  return {
    runId,
    requestId: request.id,
    tenantId: identity.tenantId,
    userId: identity.userId,
    role: identity.role,
    correlationId,
  };
}
