import type { FastifyReply, FastifyRequest } from "fastify";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import { checkCorrelationId } from "../../runner/check-correlation-id.js";

/**
 * The correlation id the caller sent in `x-correlation-id` (checked: it travels on as an HTTP header to providers
 * and tools), or a new one; either way echoed in the answer's `x-correlation-id` header.
 */
export function correlationIdOf(
  request: FastifyRequest,
  reply: FastifyReply,
  environment: RuntimeEnvironment,
): string {
  const sent = request.headers["x-correlation-id"];
  const correlationId = typeof sent === "string" ? sent : environment.newId("corr");
  checkCorrelationId(correlationId);
  reply.header("x-correlation-id", correlationId);
  return correlationId;
}
