import type { FastifyPluginAsync } from "fastify";
import { CharterError } from "../../foundation/charter-error.js";
import type { LocalViewerSessions } from "../identity/local-viewer-sessions.js";
import { errorReference } from "./error-schema.js";

export interface LocalViewerRoutesOptions {
  readonly sessions: LocalViewerSessions;
}

/**
 * `POST /v1/view/session {"token"}`: `charter view`'s page exchanges the one-time token of the address the command
 * printed for a session credential (once: the token is spent). Registered only by `charter view`.
 */
export const localViewerRoutes: FastifyPluginAsync<LocalViewerRoutesOptions> = async (app, { sessions }) => {
  app.post<{ Body: { token: string } }>(
    "/v1/view/session",
    {
      config: { public: true },
      schema: {
        summary: "charter view: exchange the one-time sign-in token for a session credential",
        tags: ["session"],
        security: [],
        body: {
          type: "object",
          additionalProperties: false,
          required: ["token"],
          properties: { token: { type: "string", minLength: 1, maxLength: 200 } },
        },
        response: {
          200: { type: "object", required: ["credential"], properties: { credential: { type: "string" } } },
          400: errorReference,
          401: errorReference,
        },
      },
    },
    async (request) => {
      const credential = sessions.exchange(request.body.token);
      if (credential === null) {
        throw new CharterError(
          "AUTH_INVALID",
          "this sign-in token is not valid or was already used: run charter view again",
          {
            details: { reason: "view_token_spent_or_unknown" },
          },
        );
      }
      return { credential };
    },
  );
};
