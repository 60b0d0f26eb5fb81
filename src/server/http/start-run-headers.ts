/** The request headers every route that starts a run reads (the agent run route adds the trace context ones). */
export const startRunHeaders = {
  type: "object",
  properties: {
    "idempotency-key": {
      type: "string",
      minLength: 1,
      maxLength: 255,
      description: "Retries with the same key and body return the same run; another body is 422.",
    },
    "x-correlation-id": {
      type: "string",
      description: "Your id for what the run serves (generated if absent).",
    },
  },
} as const;
