import { CharterError } from "../../foundation/charter-error.js";
import type { ErrorCode } from "../../foundation/error-codes.js";
import { type FailureClass, failureClassOf } from "../failure-class.js";

/** The one shape of every error the API answers: `{ error: { code, class, message, details } }`. */
export interface ErrorBody {
  readonly error: {
    /** A stable code (`RUN_NOT_FOUND`, `AUTH_INVALID`...): branch on it, never on the message. */
    readonly code: ErrorCode;
    readonly class: FailureClass;
    readonly message: string;
    readonly details: Readonly<Record<string, unknown>>;
  };
}

export interface ErrorResponse {
  readonly status: number;
  readonly body: ErrorBody;
}

/** The statuses of the codes the API answers with that are not chosen by their class alone. */
const statusByCode: Partial<Record<ErrorCode, number>> = {
  AUTH_INVALID: 401,
  PERMISSION_DENIED: 403,
  AGENT_DISABLED: 403,
  CLIENT_BLOCKED: 403,
  RUN_NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  AGENT_NOT_FOUND: 404,
  API_KEY_NOT_FOUND: 404,
  WORKFLOW_NOT_FOUND: 404,
  WORK_REPOSITORY_NOT_FOUND: 404,
  // A body the route's schema accepts whose work item or workflow input fails its own schema.
  WORK_ITEM_INVALID: 422,
  WORKFLOW_INPUT_INVALID: 422,
  RUN_STATE_CONFLICT: 409,
  IDEMPOTENCY_KEY_REUSED: 422,
  TENANT_SECRETS_KEY_MISSING: 422,
  TENANT_SECRET_UNREADABLE: 500,
};

const statusByClass: Record<FailureClass, number> = {
  validation_error: 400,
  auth_error: 401,
  permission_error: 403,
  tenant_scope_violation: 403,
  rate_limit_exceeded: 429,
  provider_error: 500,
  tool_error: 500,
  timeout: 500,
  internal_error: 500,
};

export function errorResponse(
  code: ErrorCode,
  message: string,
  details: Readonly<Record<string, unknown>> = {},
): ErrorResponse {
  const failureClass = failureClassOf(code);
  return {
    status: statusByCode[code] ?? statusByClass[failureClass],
    body: { error: { code, class: failureClass, message, details } },
  };
}

/** One issue of a request that failed its route's schema, as Fastify reports it (Ajv's error plus where). */
interface SchemaIssue {
  readonly instancePath?: string;
  readonly schemaPath?: string;
  readonly keyword?: string;
  readonly message?: string;
  readonly params?: Record<string, unknown>;
}

/**
 * What the API answers for anything thrown while serving a request: a CharterError by its code; a request that
 * failed its schema, or that Fastify refused before any route ran (a body that is not JSON, too large, of another
 * content type), 400 `REQUEST_INVALID` naming what and where; anything else 500 `INTERNAL_ERROR`, without its
 * message (it could carry anything).
 */
export function errorResponseOf(error: unknown): ErrorResponse {
  if (CharterError.isInstance(error)) {
    // A store that cannot be reached says so, without its driver's words.
    if (error.code === "INTERNAL_ERROR") {
      return errorResponse("INTERNAL_ERROR", "the server failed to serve the request", {
        ...(typeof error.details.reason === "string" ? { reason: error.details.reason } : {}),
      });
    }
    return errorResponse(error.code, error.message, error.details);
  }
  const fastifyError = error as {
    readonly validation?: readonly SchemaIssue[];
    readonly validationContext?: string;
    readonly statusCode?: number;
    readonly code?: string;
    readonly message?: string;
  };
  if (Array.isArray(fastifyError.validation)) {
    const location = fastifyError.validationContext ?? "request";
    // A `oneOf` that failed is the issue (`give prompt or input`); what each of its alternatives missed is noise.
    const alternatives = fastifyError.validation.some((issue) => issue.keyword === "oneOf");
    const relevant = alternatives
      ? fastifyError.validation.filter((issue) => !(issue.schemaPath ?? "").includes("/oneOf/"))
      : fastifyError.validation;
    const issues = relevant.map((issue) => schemaIssue(location, issue));
    return errorResponse(
      "REQUEST_INVALID",
      `the request does not match the API: ${issues.map((issue) => issue.message).join("; ")}`,
      { location, issues },
    );
  }
  const status = fastifyError.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    return errorResponse("REQUEST_INVALID", fastifyError.message ?? "the request cannot be read", {
      reason: fastifyError.code ?? null,
    });
  }
  return errorResponse("INTERNAL_ERROR", "the server failed to serve the request", {});
}

function schemaIssue(location: string, issue: SchemaIssue) {
  const params = issue.params ?? {};
  // Name the offending key itself where Ajv puts it in params rather than in the path.
  const key =
    typeof params.additionalProperty === "string"
      ? `/${params.additionalProperty}`
      : typeof params.missingProperty === "string"
        ? `/${params.missingProperty}`
        : "";
  const path = `${location}${issue.instancePath ?? ""}${key}`;
  const message =
    issue.keyword === "additionalProperties"
      ? `${path} is not a known field`
      : issue.keyword === "required"
        ? `${path} is required`
        : issue.keyword === "oneOf"
          ? `${path} must match exactly one of its alternatives (see /openapi.json)`
          : `${path} ${issue.message ?? "is invalid"}`;
  return { path, keyword: issue.keyword ?? null, message };
}
