import type { ToolManifestEntry } from "../../contract/execution-contract.js";
import { CharterError } from "../../foundation/charter-error.js";
import { deepFreeze } from "../../foundation/deep-freeze.js";
import { compileJsonSchema } from "../compile-json-schema.js";
import { describeError } from "../describe-error.js";
import type { RegisteredTool, ToolExecutionContext, ToolOutput, ToolSource } from "../tool-definition.js";
import { correlationIdFields } from "./correlation-id-fields.js";
import { restResponseToOutput } from "./rest-response-to-output.js";
import { expandBody, expandHeader, expandUrl, placeholdersIn } from "./rest-template.js";
import type { RestToolDefinition, RestToolMethod } from "./rest-tool-definition.js";
import { systemCodeOf } from "./system-code-of.js";

export interface RestToolSourceOptions {
  /** The most bytes of a response body that are read; a longer body fails the call. Default 10 MiB. */
  readonly maxResponseBytes?: number;
  /**
   * The run's correlation id, sent as `x-correlation-id` with every request (unless the tool's own `headers`
   * set that header). Absent: no such header.
   */
  readonly correlationId?: string;
}

/** The prefix of every REST tool's name as the model sees it: `rest__<name>`. */
export const restToolPrefix = "rest__";

const methods: readonly RestToolMethod[] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"];
const namePattern = /^[A-Za-z0-9_-]{1,58}$/;
const headerNamePattern = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** The most bytes of a response body read when `maxResponseBytes` is not given: 10 MiB. */
export const defaultRestMaxResponseBytes = 10 * 1024 * 1024;
const defaultParametersSchema = Object.freeze({
  type: "object",
  properties: {},
  additionalProperties: false,
});

function invalid(name: string, key: string, reason: string): CharterError {
  return new CharterError("CONFIGURATION_INVALID", `restTools.${name}.${key}: ${reason}`, {
    details: { tool: name, key: `restTools.${name}.${key}`, reason },
  });
}

/**
 * How safe a method is to repeat, by seed 004 "Idempotency & Retry Safety" rather than by what RFC 9110 lets a
 * server promise: GET and HEAD are read-only (safe to retry, cacheable); DELETE is never safe to auto-retry and
 * needs a confirmation (destructive); PUT, POST and PATCH change state, so they are never re-run automatically.
 * Configuration (`idempotentTools`, `readOnlyTools`, `destructiveTools`) overrides this per tool.
 */
function annotationsFor(method: RestToolMethod): Record<string, unknown> {
  if (method === "GET" || method === "HEAD") return { readOnlyHint: true, openWorldHint: true };
  if (method === "DELETE") return { destructiveHint: true, openWorldHint: true };
  return { openWorldHint: true };
}

/** The URL as a description may show it: no credentials, query or fragment, which may hold secrets. */
function describedUrl(url: string): string {
  return (url.split(/[?#]/)[0] ?? "").replace(/^([a-z]+:\/\/)[^/@]*@/i, "$1");
}

/** Checks a definition once, at start, so that a mistake is a configuration error rather than a failed call. */
function checkDefinition(name: string, definition: RestToolDefinition): Readonly<Record<string, unknown>> {
  if (!namePattern.test(name))
    throw invalid(name, "name", "a REST tool name is 1-58 letters, digits, _ or -");
  if (!methods.includes(definition.method)) {
    throw invalid(name, "method", `expected one of ${methods.join(", ")}`);
  }
  const sample = definition.url.replace(/\$\{parameters\.[^}]*\}/g, "x");
  if (!URL.canParse(sample) || !["http:", "https:"].includes(new URL(sample).protocol)) {
    throw invalid(name, "url", "expected an absolute http:// or https:// URL");
  }
  for (const header of Object.keys(definition.headers ?? {})) {
    if (!headerNamePattern.test(header))
      throw invalid(name, "headers", `'${header}' is not a valid header name`);
  }
  const hasBody = definition.bodyTemplate !== undefined && definition.bodyTemplate !== null;
  if (hasBody && (definition.method === "GET" || definition.method === "HEAD")) {
    throw invalid(name, "bodyTemplate", `a ${definition.method} request has no body`);
  }
  const schema = definition.parametersSchema ?? defaultParametersSchema;
  if (schema.type !== "object")
    throw invalid(name, "parametersSchema", 'expected a schema with type "object"');
  try {
    compileJsonSchema(schema);
  } catch (error) {
    throw invalid(name, "parametersSchema", describeError(error));
  }
  const { paths, malformed } = placeholdersIn([
    definition.url,
    definition.headers ?? {},
    definition.bodyTemplate,
  ]);
  if (malformed.length > 0) {
    throw invalid(name, "url", `malformed placeholder ${malformed[0]} (expected \${parameters.name})`);
  }
  const properties = schema.properties;
  if (properties !== null && typeof properties === "object") {
    const unknown = paths.find((path) => !Object.hasOwn(properties, path.split(".")[0] ?? ""));
    if (unknown !== undefined) {
      throw invalid(name, "parametersSchema", `\${parameters.${unknown}} names no property of the schema`);
    }
  }
  return schema;
}

function restTool(
  name: string,
  definition: RestToolDefinition,
  maxResponseBytes: number,
  correlationId: string | undefined,
): RegisteredTool {
  const schema = checkDefinition(name, definition);
  const { method, timeout } = definition;
  const headerTemplates = Object.entries(definition.headers ?? {});
  const hasBody = definition.bodyTemplate !== undefined && definition.bodyTemplate !== null;
  const manifest: ToolManifestEntry = deepFreeze({
    name: `${restToolPrefix}${name}`,
    description: definition.description ?? `${method} ${describedUrl(definition.url)}`,
    input_schema: structuredClone(schema) as Record<string, unknown>,
    // The contract's source kinds are builtin, mcp and function: a REST tool is a function of Charter's own,
    // and `server: "rest"` names it in accounting (`mcpServer: "rest"`, `command: <name>`).
    source: { kind: "function" as const, server: "rest", tool: name },
    annotations: annotationsFor(method),
  });

  async function execute(
    input: Readonly<Record<string, unknown>>,
    context: ToolExecutionContext,
  ): Promise<ToolOutput> {
    const url = expandUrl(definition.url, input);
    if (!URL.canParse(url)) {
      throw new CharterError("TOOL_INPUT_INVALID", "the parameters do not make a valid URL", {
        details: { tool: name },
      });
    }
    const headers = new Headers();
    for (const [header, template] of headerTemplates)
      headers.set(header, expandHeader(header, template, input));
    if (correlationId !== undefined && !headers.has(correlationIdFields.header))
      headers.set(correlationIdFields.header, correlationId);
    let body: string | undefined;
    if (hasBody) {
      body = JSON.stringify(expandBody(definition.bodyTemplate, input));
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
    }
    if (!headers.has("accept")) headers.set("accept", "application/json, text/*;q=0.9, */*;q=0.8");
    const deadline = timeout == null ? null : AbortSignal.timeout(timeout);
    const signal = deadline === null ? context.signal : AbortSignal.any([context.signal, deadline]);
    const timedOut = () => deadline?.aborted === true && !context.signal.aborted;
    try {
      const response = await fetchFollowingSafeRedirects(name, {
        url: new URL(url),
        method,
        headers,
        body,
        signal,
        carriesCredentials: headerTemplates.length > 0,
      });
      return await restResponseToOutput(response, { method, maxBytes: maxResponseBytes });
    } catch (error) {
      if (timedOut()) {
        throw new CharterError("TOOL_TIMEOUT", `no complete response within ${timeout} ms`, {
          details: { tool: name, timeout },
        });
      }
      if (CharterError.isInstance(error)) throw error;
      const systemCode = systemCodeOf(error);
      throw new CharterError(
        "TOOL_EXECUTION_FAILED",
        `the request failed: ${systemCode ?? describeError(error)}`,
        { details: { tool: name, ...(systemCode === null ? {} : { systemCode }) } },
      );
    }
  }

  return { manifest, queue: definition.queue ?? null, execute };
}

/** How many redirects one call follows, as fetch does by default. */
const maxRedirects = 20;
const redirectStatuses: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/**
 * Sends the request and follows redirects by hand, as fetch would, except that a redirect to another origin is
 * never followed with the tool's configured headers (which carry credentials) or with a body: such a call fails
 * with TOOL_REDIRECT_REFUSED naming the target (without its query or credentials). A redirect within the origin,
 * or one that carries neither (a plain GET moving from http to https, say), is followed. As fetch does, 303 (and
 * 301 and 302 after a POST) continue as GET without the body; 307 and 308 keep the method and body.
 */
async function fetchFollowingSafeRedirects(
  tool: string,
  request: {
    readonly url: URL;
    readonly method: RestToolMethod;
    readonly headers: Headers;
    readonly body: string | undefined;
    readonly signal: AbortSignal;
    readonly carriesCredentials: boolean;
  },
): Promise<Response> {
  const origin = request.url.origin;
  let url = request.url;
  let method: string = request.method;
  let body = request.body;
  const headers = new Headers(request.headers);
  for (let redirects = 0; ; redirects++) {
    const response = await fetch(url, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      signal: request.signal,
      redirect: "manual",
    });
    const location = response.headers.get("location");
    if (!redirectStatuses.has(response.status) || location === null) return response;
    await response.body?.cancel().catch(() => {});
    const target = URL.parse(location, url.href);
    if (target === null || (target.protocol !== "http:" && target.protocol !== "https:")) {
      throw new CharterError(
        "TOOL_EXECUTION_FAILED",
        `HTTP ${response.status} redirects to an address that is not an http(s) URL`,
        { details: { tool, status: response.status } },
      );
    }
    if (redirects >= maxRedirects) {
      throw new CharterError("TOOL_EXECUTION_FAILED", `more than ${maxRedirects} redirects`, {
        details: { tool, maxRedirects },
      });
    }
    if (
      (response.status === 303 && method !== "HEAD") ||
      ((response.status === 301 || response.status === 302) && method === "POST")
    ) {
      method = "GET";
      body = undefined;
      headers.delete("content-type");
    }
    if (target.origin !== origin && (request.carriesCredentials || body !== undefined)) {
      const named = describedUrl(target.href);
      throw new CharterError(
        "TOOL_REDIRECT_REFUSED",
        `HTTP ${response.status} redirects to another origin (${named}); it is not followed with the tool's configured headers or body`,
        { details: { tool, status: response.status, target: named } },
      );
    }
    url = target;
  }
}

/**
 * Tools defined in configuration that call HTTP APIs (`restTools.<name>`), offered to the model as
 * `rest__<name>`. `start()` checks every definition (CONFIGURATION_INVALID on the first mistake) and makes
 * no request. Each call's arguments are validated against `parametersSchema` by the pipeline before this
 * source sees them; the request is then built from the templates, and the response becomes the output.
 */
export function createRestToolSource(
  restTools: Readonly<Record<string, RestToolDefinition>>,
  options: RestToolSourceOptions = {},
): ToolSource {
  const maxResponseBytes = options.maxResponseBytes ?? defaultRestMaxResponseBytes;
  return {
    name: "rest",
    async start() {
      return Object.entries(restTools).map(([name, definition]) =>
        restTool(name, definition, maxResponseBytes, options.correlationId),
      );
    },
    async close() {},
  };
}
