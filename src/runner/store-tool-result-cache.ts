import type { Configuration } from "../config/configuration-schema.js";
import { contentHash } from "../foundation/content-hash.js";
import type { SecretRedactor } from "../foundation/secret-redactor.js";
import type { RunStore } from "../store/run-store.js";
import { toolRequestHash } from "../store/tool-request-hash.js";
import type { ToolResultCache } from "../tools/stages/cache-stage.js";
import type { ToolExecutionResult } from "../tools/tool-execution-result.js";
import type { ToolCallContext } from "../tools/tool-pipeline.js";

/**
 * The read-only tool cache kept in the run store, which every run on it shares (by default one file for all of a
 * user's projects). A name alone does not identify a tool across projects: two projects' `fs` servers may serve
 * different directories with the same tool names and arguments. So the key is the request's `toolRequestHash`
 * together with a fingerprint of where the tool comes from: the MCP server's definition (command, arguments,
 * environment, URL) and, for a local server, the directory it runs in; a REST tool's definition. A function tool
 * (library) is known by its name only.
 *
 * Nor does a store serve one tenant's results to another: the key binds the run's tenant, and the narrower scope
 * a server may add within it (a role, a user), and the entry records both so that `cachePurgeTenant` removes a
 * tenant's entries on their own.
 */
export function createStoreToolResultCache(
  store: RunStore,
  sources: {
    readonly configuration: Configuration;
    readonly cwd: string;
    readonly tenantId?: string | null;
    readonly scope?: string | null;
    /** Redacts registered secrets from each result before it is stored (the cache stage runs before the session's own redaction). */
    readonly redactor?: SecretRedactor;
  },
): ToolResultCache {
  const tenantId = sources.tenantId ?? null;
  const scope = sources.scope ?? null;
  const fingerprints = new Map<string, string>();
  function fingerprintOf(server: string | null, tool: string): string | null {
    const { configuration, cwd } = sources;
    let definition: unknown = null;
    if (server !== null && Object.hasOwn(configuration.mcpServers, server)) {
      const mcp = configuration.mcpServers[server];
      // A local server's relative paths and files are resolved in the directory it is started in.
      definition = { kind: "mcp", definition: mcp, cwd: mcp?.type === "stdio" ? (mcp.cwd ?? cwd) : null };
    } else if (server === "rest" && Object.hasOwn(configuration.restTools, tool)) {
      definition = { kind: "rest", definition: configuration.restTools[tool] };
    }
    if (definition === null) return null;
    const name = `${server}\u0000${tool}`;
    let fingerprint = fingerprints.get(name);
    if (fingerprint === undefined) {
      fingerprint = contentHash(definition);
      fingerprints.set(name, fingerprint);
    }
    return fingerprint;
  }
  return {
    keyOf: (request) => {
      const fingerprint = fingerprintOf(request.server, request.tool);
      return toolCacheKey({ request: toolRequestHash(request), source: fingerprint, tenantId, scope });
    },
    async get(key, now) {
      const entry = await store.cacheGet(key, now);
      return entry === null ? null : (entry.value as ToolExecutionResult);
    },
    async put(entry) {
      await store.cachePut({
        key: entry.key,
        server: entry.server,
        tool: entry.tool,
        value: sources.redactor === undefined ? entry.value : sources.redactor.redactValue(entry.value),
        expiresAt: entry.expiresAt,
        tenantId,
        scope,
      });
    },
    // Every scope's entries of the source go: a write through it changes what any role would read.
    async invalidate(source) {
      await store.cachePurgeTenant(tenantId, { server: source.server });
    },
  };
}

/**
 * The cache key of a read-only tool request: its `toolRequestHash`, the fingerprint of the tool's source (null for a
 * function tool), the tenant and the scope within it (null: none). Version 2: version 1 bound neither tenant nor scope.
 */
export function toolCacheKey(parts: {
  readonly request: string;
  readonly source: string | null;
  readonly tenantId: string | null;
  readonly scope: string | null;
}): string {
  return contentHash({
    kind: "charter.tool-cache-key",
    request: parts.request,
    scope: parts.scope,
    source: parts.source,
    tenant: parts.tenantId,
    v: 2,
  });
}

/**
 * The configured TTL of a call's tool: `toolCache["<server>__<tool>"]`, else `toolCache["<server>"]`, else
 * `defaultTtl` (a server caches every read-only tool), else none.
 */
export function toolCacheTtl(
  configuration: Configuration,
  defaultTtl: number | null = null,
): (call: ToolCallContext) => number | null {
  const ttls = configuration.toolCache;
  return (call) => {
    const name = call.invocation.name;
    if (Object.hasOwn(ttls, name)) return ttls[name] ?? null;
    const server = call.tool?.manifest.source.server ?? null;
    return server !== null && Object.hasOwn(ttls, server) ? (ttls[server] ?? null) : defaultTtl;
  };
}
