import { authenticatedErrors, errorReference } from "./error-schema.js";

/**
 * The answers of a route that starts a run: 202 with its id once it is accepted, or (with `wait: true`) 200 with
 * the ended run as `view` (a schema reference such as `Run#`) describes it.
 */
export function startRunResponses(view: string) {
  return {
    200: { $ref: view },
    202: { type: "object", required: ["runId"], properties: { runId: { type: "string" } } },
    404: errorReference,
    422: errorReference,
    ...authenticatedErrors,
  } as const;
}
