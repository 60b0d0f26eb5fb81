import type { FastifyPluginAsync } from "fastify";

/** `GET /openapi.json`: the OpenAPI document @fastify/swagger builds from every route's schema. */
export const openApiRoutes: FastifyPluginAsync = async (app) => {
  app.get(
    "/openapi.json",
    { config: { public: true }, schema: { hide: true } },
    // The document of the whole server (the root instance's), not of this plugin's own context.
    async () => app.swagger(),
  );
};
