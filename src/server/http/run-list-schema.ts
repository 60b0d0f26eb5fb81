import { authenticatedErrors } from "./error-schema.js";

export interface RunListSchemaOptions {
  readonly summary: string;
  readonly tags: readonly string[];
  /** The answer's property holding the page (`runs`, `workflowRuns`, `workItemRuns`). */
  readonly itemsKey: string;
  /** The schema reference of one listed run (`Run#`...). */
  readonly view: string;
  /** The `status` filter's schema. */
  readonly status: Readonly<Record<string, unknown>>;
  /** Filters besides `status` (after it in the query's schema). */
  readonly filters?: Readonly<Record<string, unknown>>;
  readonly limit: { readonly maximum: number; readonly default: number };
}

/**
 * The schema of a route listing the tenant's runs a page at a time: `status` (and other filters), `limit` and the
 * opaque `cursor` of the previous page; the answer is the page under `itemsKey` with `nextCursor` (null at the end).
 */
export function runListSchema(options: RunListSchemaOptions) {
  return {
    summary: options.summary,
    tags: options.tags,
    querystring: {
      type: "object",
      additionalProperties: false,
      properties: {
        status: options.status,
        ...options.filters,
        limit: { type: "integer", minimum: 1, ...options.limit },
        cursor: { type: "string", minLength: 1, description: "nextCursor of the previous page." },
      },
    },
    response: {
      200: {
        type: "object",
        required: [options.itemsKey, "nextCursor"],
        properties: {
          [options.itemsKey]: { type: "array", items: { $ref: options.view } },
          nextCursor: { type: ["string", "null"] },
        },
      },
      ...authenticatedErrors,
    },
  };
}
