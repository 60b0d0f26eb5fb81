import { failureClasses } from "../failure-class.js";

/** The JSON schema of every error response (the OpenAPI document's `Error`). */
export const errorSchema = {
  $id: "Error",
  type: "object",
  description: "Every error the API answers has this shape; `code` is stable, `class` is the failure class.",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "class", "message", "details"],
      properties: {
        code: { type: "string", description: "A stable error code such as RUN_NOT_FOUND or AUTH_INVALID." },
        class: { type: "string", enum: [...failureClasses] },
        message: { type: "string" },
        details: { type: "object", additionalProperties: true },
      },
    },
  },
} as const;

/** `$ref` to the shared error schema, for a route's `response` map. */
export const errorReference = { $ref: "Error#" } as const;

/** The error responses every authenticated route can give, for its `response` map. */
export const authenticatedErrors = {
  400: errorReference,
  401: errorReference,
  403: errorReference,
  429: errorReference,
  500: errorReference,
} as const;
