/** The `:id` path parameter of every route that reads or steers one run (an agent, workflow or work item run). */
export const runIdParams = {
  type: "object",
  required: ["id"],
  properties: { id: { type: "string", minLength: 1, maxLength: 200 } },
} as const;
