import { readFileSync } from "node:fs";
import swagger from "@fastify/swagger";
import Fastify, { type FastifyInstance } from "fastify";
import type { ServerConfiguration } from "../config/server-configuration-schema.js";
import { CharterError } from "../foundation/charter-error.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import type { RunStore } from "../store/run-store.js";
import type { RunDispatcher } from "./execution/run-dispatcher.js";
import { chatCompletionRoutes } from "./http/chat-completion-routes.js";
import { errorResponse, errorResponseOf } from "./http/error-response.js";
import { errorSchema } from "./http/error-schema.js";
import { healthRoutes } from "./http/health-routes.js";
import { keyRoutes } from "./http/key-routes.js";
import { localViewerRoutes } from "./http/local-viewer-routes.js";
import { openApiRoutes } from "./http/openapi-routes.js";
import { runEventRoutes } from "./http/run-event-routes.js";
import { runInspectionRoutes } from "./http/run-inspection-routes.js";
import { runRoutes } from "./http/run-routes.js";
import { sessionRoutes } from "./http/session-routes.js";
import { statsRoutes } from "./http/stats-routes.js";
import { tenantConfigurationRoutes } from "./http/tenant-configuration-routes.js";
import { viewerRoutes } from "./http/viewer-routes.js";
import { workItemRunRoutes } from "./http/work-item-run-routes.js";
import { workflowRunRoutes } from "./http/workflow-run-routes.js";
import "./http/request-identity.js";
import { createAuthenticator } from "./identity/authenticate-request.js";
import { createJwtVerifier } from "./identity/jwt-verifier.js";
import type { LocalViewerSessions } from "./identity/local-viewer-sessions.js";
import { roleMayDo } from "./identity/server-permissions.js";
import {
  createTenantScopeViolations,
  type TenantScopeViolations,
  type ViolationLimits,
} from "./identity/tenant-scope-violations.js";
import { createRequestRateLimiter, unlimitedRequests } from "./limits/request-rate-limiter.js";

export interface CreateServerOptions {
  /**
   * The run store, opened by the caller (and closed by it, after the server): every tenant's requests read and
   * write it through `store.forTenant(tenant)`.
   */
  readonly store: RunStore;
  /** Where accepted runs go to be executed; routes that start or steer runs need it. */
  readonly dispatcher?: RunDispatcher;
  /** The configuration's `server` section: JWT verification (`auth.jwt`), `trustProxy`. */
  readonly configuration?: ServerConfiguration;
  /** Clock and ids (request ids, run ids, the JWT clock, blocks); default the system's. */
  readonly environment?: RuntimeEnvironment;
  /** When attempts at other tenants' data block an address; default 5 within an hour block it for 5 minutes. */
  readonly violationLimits?: ViolationLimits;
  /** The built run viewer served at `/`; default the package's `dist/viewer`. */
  readonly viewerDirectory?: string;
  /**
   * The key tenants' provider keys are sealed with before they are stored (`loadTenantSecretsKey`); without one,
   * `PUT /v1/tenant/config` refuses provider keys.
   */
  readonly secretsKey?: Uint8Array | null;
  /**
   * A server that changes nothing (`charter view`): routes that would (start, cancel, approve, keys, tenant
   * configuration) are not registered at all, so they answer 404 like any unknown path.
   */
  readonly readOnly?: boolean;
  /** `charter view`'s one-time sign-in: `POST /v1/view/session` exchanges it for a session credential. */
  readonly localViewer?: LocalViewerSessions;
  /**
   * Whether requests are counted against the configuration's rate limits (default true). `charter view` turns it
   * off: one person reading their own store should neither be limited nor write counters into it.
   */
  readonly limitRequests?: boolean;
}

/** A Charter server, built and ready to listen. */
export interface CharterServer {
  /** The Fastify instance, ready (every plugin loaded): for `inject` and for reading the OpenAPI document. */
  readonly app: FastifyInstance;
  /**
   * Listens and resolves with the address it listens on (`http://127.0.0.1:8787`). `backlog`: the length of the
   * queue of connections not accepted yet (default Node's 511; the system caps it).
   */
  listen(options: {
    readonly host: string;
    readonly port: number;
    readonly backlog?: number;
  }): Promise<string>;
  /** Stops taking connections and waits for the requests under way. The store is the caller's to close. */
  close(): Promise<void>;
}

const packageVersion = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

/**
 * Builds the HTTP API as a Fastify app made of plugins, one per route group, each route with JSON schemas (which
 * validate requests and make the OpenAPI document at `/openapi.json`). Every error, Fastify's own included, is
 * answered in one shape (`{ error: { code, class, message, details } }`).
 */
export async function createServer(options: CreateServerOptions): Promise<CharterServer> {
  const environment = options.environment ?? systemEnvironment;
  const { store } = options;
  const jwtConfiguration = options.configuration?.auth?.jwt;
  const authenticate = createAuthenticator({
    store,
    jwt: jwtConfiguration === undefined ? null : createJwtVerifier(jwtConfiguration, environment),
    ...(options.localViewer !== undefined ? { localSessions: options.localViewer } : {}),
  });
  const violations: TenantScopeViolations = createTenantScopeViolations({
    store,
    environment,
    ...(options.violationLimits !== undefined ? { limits: options.violationLimits } : {}),
  });
  const rateLimiter =
    options.limitRequests === false
      ? unlimitedRequests
      : createRequestRateLimiter({
          store,
          environment,
          ...(options.configuration?.rateLimits !== undefined
            ? { limits: options.configuration.rateLimits }
            : {}),
        });
  const app = Fastify({
    logger: false,
    // Behind a proxy the server trusts, the client address is the one it forwards (X-Forwarded-For).
    trustProxy: options.configuration?.trustProxy ?? false,
    genReqId: () => environment.newId("req"),
    ajv: {
      // A field the API does not know is refused (the route's schema says `additionalProperties: false`), never
      // silently dropped: a typo must not change what a request does.
      customOptions: { removeAdditional: false, coerceTypes: "array", useDefaults: true, allErrors: false },
    },
  });
  app.addSchema(errorSchema);
  app.decorateRequest("identity", null);
  app.setErrorHandler((error, _request, reply) => {
    const response = errorResponseOf(error);
    const retryAfter = response.body.error.details.retryAfterSeconds;
    if (typeof retryAfter === "number") reply.header("retry-after", String(retryAfter));
    return reply.status(response.status).send(response.body);
  });
  // Every route but the public ones: an address over its request limit or blocked is refused first, then the
  // caller is authenticated and counted against its tenant's and user's limits, then its role must allow what the
  // route does. A path no route serves is answered 404 by the not-found handler.
  app.addHook("onRequest", async (request) => {
    const config = request.routeOptions.config;
    if (request.routeOptions.url === undefined || config.public === true) return;
    await rateLimiter.checkAddress(request.ip);
    const blockedUntil = violations.blockedUntil(request.ip);
    if (blockedUntil !== null) {
      throw new CharterError(
        "CLIENT_BLOCKED",
        "this address is blocked for a while after repeated requests for other tenants' data",
        { details: { retryAfterSeconds: Math.ceil((blockedUntil - environment.now()) / 1000) } },
      );
    }
    const identity = await authenticate(request.headers.authorization);
    request.identity = identity;
    await rateLimiter.checkCaller(identity);
    const permission = config.permission;
    if (permission !== undefined && !roleMayDo(identity.role, permission)) {
      throw new CharterError(
        "PERMISSION_DENIED",
        `the role ${identity.role} may not do this (${permission})`,
        {
          details: { role: identity.role, permission },
        },
      );
    }
  });
  app.setNotFoundHandler((request, reply) => {
    const response = errorResponse(
      "ROUTE_NOT_FOUND",
      `no route ${request.method} ${request.url.split("?")[0]}`,
      {
        method: request.method,
      },
    );
    return reply.status(response.status).send(response.body);
  });
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Charter",
        description: "Runs of contract-bound LLM agents, for several tenants.",
        version: packageVersion,
      },
      components: {
        securitySchemes: {
          bearer: {
            type: "http",
            scheme: "bearer",
            description: "An API key from `charter keys create`, or a JWT from the configured issuer.",
          },
        },
      },
      security: [{ bearer: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`),
    },
  });
  await app.register(healthRoutes, { store: options.store });
  await app.register(openApiRoutes);
  if (options.localViewer !== undefined)
    await app.register(localViewerRoutes, { sessions: options.localViewer });
  // Read-only: the route groups are registered in a scope whose methods that change things register nothing
  // (Fastify's child scopes inherit them), so no writing route exists, rather than each one refusing.
  if (options.readOnly === true) {
    await app.register(async (readOnlyScope) => {
      const ignored = () => readOnlyScope;
      const route = readOnlyScope.route.bind(readOnlyScope);
      Object.assign(readOnlyScope, {
        post: ignored,
        put: ignored,
        patch: ignored,
        delete: ignored,
        route: (routeOptions: Parameters<typeof route>[0]) =>
          [routeOptions.method].flat().every((method) => method === "GET" || method === "HEAD")
            ? route(routeOptions)
            : readOnlyScope,
      });
      await registerRouteGroups(readOnlyScope);
    });
  } else await registerRouteGroups(app);
  await app.ready();

  async function registerRouteGroups(app: FastifyInstance): Promise<void> {
    await app.register(keyRoutes, { store, environment, violations });
    const budgets = options.configuration?.budgets;
    const budgetOption = budgets !== undefined ? { budgets } : {};
    await app.register(runRoutes, {
      ...budgetOption,
      store,
      environment,
      violations,
      ...(options.dispatcher !== undefined ? { dispatcher: options.dispatcher } : {}),
    });
    const { workflows, repositories } = options.configuration ?? {};
    await app.register(workflowRunRoutes, {
      ...budgetOption,
      store,
      environment,
      violations,
      ...(options.dispatcher !== undefined ? { dispatcher: options.dispatcher } : {}),
      ...(workflows !== undefined ? { workflowsDirectory: workflows } : {}),
    });
    await app.register(workItemRunRoutes, {
      ...budgetOption,
      store,
      environment,
      violations,
      ...(options.dispatcher !== undefined ? { dispatcher: options.dispatcher } : {}),
      ...(repositories !== undefined ? { repositories } : {}),
    });
    await app.register(runEventRoutes, {
      store,
      violations,
      ...(options.dispatcher?.events !== undefined ? { events: options.dispatcher.events } : {}),
    });
    await app.register(chatCompletionRoutes, {
      ...budgetOption,
      store,
      environment,
      ...(options.dispatcher !== undefined ? { dispatcher: options.dispatcher } : {}),
    });
    await app.register(tenantConfigurationRoutes, {
      store,
      environment,
      secretsKey: options.secretsKey ?? null,
    });
    await app.register(statsRoutes, { store, environment, ...budgetOption });
    await app.register(runInspectionRoutes, { store, violations });
    await app.register(sessionRoutes, { readOnly: options.readOnly === true });
    await app.register(
      viewerRoutes,
      options.viewerDirectory !== undefined ? { directory: options.viewerDirectory } : {},
    );
  }

  return {
    app,
    async listen({ host, port, backlog }) {
      await app.listen({ host, port, ...(backlog !== undefined ? { backlog } : {}) });
      const address = app.server.address();
      if (address === null || typeof address === "string") return String(address);
      const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
      return `http://${shownHost}:${address.port}`;
    },
    close: () => app.close(),
  };
}
