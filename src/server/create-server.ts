import { readFileSync } from "node:fs";
import swagger from "@fastify/swagger";
import Fastify, { type FastifyInstance } from "fastify";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import type { RunStore } from "../store/run-store.js";
import type { RunDispatcher } from "./execution/run-dispatcher.js";
import { errorResponse, errorResponseOf } from "./http/error-response.js";
import { errorSchema } from "./http/error-schema.js";
import { healthRoutes } from "./http/health-routes.js";
import { openApiRoutes } from "./http/openapi-routes.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The route answers without credentials (health, the OpenAPI document). */
    readonly public?: boolean;
  }
}

export interface CreateServerOptions {
  /**
   * The run store, opened by the caller (and closed by it, after the server): every tenant's requests read and
   * write it through `store.forTenant(tenant)`.
   */
  readonly store: RunStore;
  /** Where accepted runs go to be executed; routes that start or steer runs need it. */
  readonly dispatcher?: RunDispatcher;
  /** Clock and ids (request ids, run ids); default the system's. */
  readonly environment?: RuntimeEnvironment;
  /**
   * Trust `X-Forwarded-For` for the client address (behind a reverse proxy); default false: the address is the
   * connection's.
   */
  readonly trustProxy?: boolean;
}

/** A Charter server, built and ready to listen. */
export interface CharterServer {
  /** The Fastify instance, ready (every plugin loaded): for `inject` and for reading the OpenAPI document. */
  readonly app: FastifyInstance;
  /** Listens and resolves with the address it listens on (`http://127.0.0.1:8787`). */
  listen(options: { readonly host: string; readonly port: number }): Promise<string>;
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
  const app = Fastify({
    logger: false,
    trustProxy: options.trustProxy ?? false,
    genReqId: () => environment.newId("req"),
    ajv: {
      // A field the API does not know is refused (the route's schema says `additionalProperties: false`), never
      // silently dropped: a typo must not change what a request does.
      customOptions: { removeAdditional: false, coerceTypes: "array", useDefaults: true, allErrors: false },
    },
  });
  app.addSchema(errorSchema);
  app.setErrorHandler((error, _request, reply) => {
    const response = errorResponseOf(error);
    return reply.status(response.status).send(response.body);
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
  await app.ready();

  return {
    app,
    async listen({ host, port }) {
      await app.listen({ host, port });
      const address = app.server.address();
      if (address === null || typeof address === "string") return String(address);
      const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
      return `http://${shownHost}:${address.port}`;
    },
    close: () => app.close(),
  };
}
