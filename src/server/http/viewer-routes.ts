import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyPluginAsync, FastifyReply } from "fastify";

export interface ViewerRoutesOptions {
  /** The built page (`index.html` and `assets/`); default the package's `dist/viewer`. */
  readonly directory?: string;
}

/**
 * The page's only sources are its own files and its own API: no inline script or style, no other origin, no
 * frames, no plugins. A report a model wrote is rendered as text nodes, so even a renderer bug could not run
 * script past this policy.
 */
export const viewerContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const contentTypes: Readonly<Record<string, string>> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
};

/**
 * Where `npm run build` puts the page: `dist/viewer`, found from this file whether it runs compiled
 * (`dist/server/http`) or from the sources (`src/server/http`, in tests).
 */
export function defaultViewerDirectory(): string {
  const candidates = ["../../viewer", "../../../dist/viewer"].map((relative) =>
    fileURLToPath(new URL(relative, import.meta.url)),
  );
  return (
    candidates.find((candidate) => existsSync(join(candidate, "index.html"))) ?? (candidates[0] as string)
  );
}

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header("content-security-policy", viewerContentSecurityPolicy)
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "no-referrer")
    .header("x-frame-options", "DENY");
}

/**
 * The run viewer: `GET /` answers the page, `GET /assets/<name>` its script and style sheet. The asset names
 * carry a hash of their content, so they are cached for a year; the page itself is revalidated every time, so a
 * new build is seen at once. Neither needs credentials: the page holds no data, and everything it shows comes
 * from the API with the credentials the person signs in with.
 */
export const viewerRoutes: FastifyPluginAsync<ViewerRoutesOptions> = async (app, options) => {
  const directory = options.directory ?? defaultViewerDirectory();
  const indexPath = join(directory, "index.html");
  const index = existsSync(indexPath) ? readFileSync(indexPath) : null;
  const assets = new Map<string, Buffer>();
  if (existsSync(join(directory, "assets"))) {
    for (const name of readdirSync(join(directory, "assets"))) {
      assets.set(name, readFileSync(join(directory, "assets", name)));
    }
  }

  app.get("/", { config: { public: true }, schema: { hide: true } }, async (_request, reply) => {
    securityHeaders(reply).header("cache-control", "no-cache");
    if (index === null) {
      return reply
        .status(503)
        .type("text/plain; charset=utf-8")
        .send(`The run viewer is not built (no ${indexPath}): run npm run build.\n`);
    }
    return reply.type("text/html; charset=utf-8").send(index);
  });

  app.get<{ Params: { name: string } }>(
    "/assets/:name",
    { config: { public: true }, schema: { hide: true } },
    async (request, reply) => {
      const content = assets.get(request.params.name);
      securityHeaders(reply);
      if (content === undefined) {
        return reply.status(404).type("text/plain; charset=utf-8").send("no such asset\n");
      }
      return reply
        .header("cache-control", "public, max-age=31536000, immutable")
        .type(contentTypes[extname(request.params.name)] ?? "application/octet-stream")
        .send(content);
    },
  );
};
