import type { Configuration } from "../config/configuration-schema.js";
import type { RunStore } from "../store/run-store.js";
import { toolRequestHash } from "../store/tool-request-hash.js";
import type { ToolResultCache } from "../tools/stages/cache-stage.js";
import type { ToolExecutionResult } from "../tools/tool-execution-result.js";
import type { ToolCallContext } from "../tools/tool-pipeline.js";

/** The read-only tool cache kept in the run store (shared by every run on it), keyed by `toolRequestHash`. */
export function createStoreToolResultCache(store: RunStore): ToolResultCache {
  return {
    keyOf: (request) => toolRequestHash(request),
    async get(key, now) {
      const entry = await store.cacheGet(key, now);
      return entry === null ? null : (entry.value as ToolExecutionResult);
    },
    async put(entry) {
      await store.cachePut({
        key: entry.key,
        server: entry.server,
        tool: entry.tool,
        value: entry.value,
        expiresAt: entry.expiresAt,
      });
    },
  };
}

/** The configured TTL of a call's tool: `toolCache["<server>__<tool>"]`, else `toolCache["<server>"]`, else none. */
export function toolCacheTtl(configuration: Configuration): (call: ToolCallContext) => number | null {
  const ttls = configuration.toolCache;
  return (call) => {
    const name = call.invocation.name;
    if (Object.hasOwn(ttls, name)) return ttls[name] ?? null;
    const server = call.tool?.manifest.source.server ?? null;
    return server !== null && Object.hasOwn(ttls, server) ? (ttls[server] ?? null) : null;
  };
}
