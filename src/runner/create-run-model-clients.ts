import type { resolveModelTargets } from "../config/resolve-model-targets.js";
import type { ModelClient } from "../model/model-client.js";
import { createModelClient } from "../model/providers/create-model-client.js";
import { withCorrelationHeader } from "./correlation-fetch.js";
import type { RunContext } from "./run-context.js";
import { createTracingFetch } from "./tracing-fetch.js";

/**
 * One model client per target of the agent, in failover order. Each sends the run's correlation id and, with
 * `traceModelHttp`, traces its HTTP (redacted); the correlation header is added outside the trace, so that the
 * trace shows it.
 */
export function createRunModelClients(
  context: RunContext,
  targets: ReturnType<typeof resolveModelTargets>,
): ModelClient[] {
  const { environment, redactor } = context;
  const traceModelHttp = context.options.traceModelHttp;
  const correlationId = context.options.correlationId;
  return targets.map((target) => {
    const traced =
      traceModelHttp === undefined
        ? undefined
        : createTracingFetch(`${target.provider}/${target.model}`, traceModelHttp, redactor);
    // The correlation id goes to the model endpoints too (outside the trace, so that the trace shows it).
    const fetch = correlationId === undefined ? traced : withCorrelationHeader(correlationId, traced);
    return createModelClient(target, { environment, ...(fetch === undefined ? {} : { fetch }) });
  });
}
