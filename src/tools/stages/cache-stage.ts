import { freezeToolResult, type ToolExecutionResult } from "../tool-execution-result.js";
import type { ToolCallContext, ToolStage } from "../tool-pipeline.js";

/** Where cached results of read-only tools live (the run store, across runs). */
export interface ToolResultCache {
  /** The request's key: a canonical hash of the tool's identity and arguments. */
  keyOf(request: {
    readonly server: string | null;
    readonly tool: string;
    readonly arguments: unknown;
  }): string;
  get(key: string, now: number): Promise<ToolExecutionResult | null>;
  put(entry: {
    readonly key: string;
    readonly server: string | null;
    readonly tool: string;
    readonly value: ToolExecutionResult;
    readonly expiresAt: number;
  }): Promise<void>;
  /**
   * Forgets the cached results of a tool source (an MCP server, the REST tools, the function tools: `server`), after
   * a call that may have changed what its read-only tools answer. Absent: a write invalidates nothing.
   */
  invalidate?(source: { readonly server: string | null; readonly tool: string }): Promise<void>;
}

/**
 * Serves read-only tools from a cache with a TTL (seed 004: READ_ONLY calls are safe to cache; the cache gives
 * them idempotency within the TTL). Only tools annotated `readOnlyHint: true` whose `ttlFor` is set are cached;
 * every other tool passes through, never served from nor stored in the cache. Results carry `cache_hit` (true or
 * false) for accounting; a failed result is never stored.
 *
 * A call of any other tool (a write, an idempotent write, a delete) that reached its tool invalidates the cached
 * results of the same source (`cache.invalidate`): what its read-only tools answer may have changed. Failed calls
 * count too, since a write may fail after it changed something.
 */
export function cacheStage(
  cache: ToolResultCache,
  ttlFor: (call: ToolCallContext) => number | null,
): ToolStage {
  return async (call, next) => {
    const tool = call.tool;
    const readOnly = tool !== null && tool.manifest.annotations?.readOnlyHint === true;
    if (
      tool !== null &&
      !readOnly &&
      tool.manifest.source.kind !== "builtin" &&
      cache.invalidate !== undefined
    ) {
      const result = await next();
      if (result.executed) {
        const source = tool.manifest.source;
        await cache.invalidate({ server: source.server, tool: source.tool }).catch(() => undefined);
      }
      return result;
    }
    const ttl = readOnly ? ttlFor(call) : null;
    if (tool === null || ttl === null) return next();
    const source = tool.manifest.source;
    const key = cache.keyOf({
      server: source.server,
      tool: source.tool,
      arguments: call.invocation.arguments,
    });
    const now = call.environment.now();
    const cached = await cache.get(key, now).catch(() => null);
    if (cached !== null) {
      // The stored result, answered for this call (its id), marked as a hit.
      return freezeToolResult({ ...cached, call_id: call.invocation.id, latency_ms: 0, cache_hit: true });
    }
    const result = await next();
    if (result.status === "ok") {
      await cache
        .put({ key, server: source.server, tool: source.tool, value: result, expiresAt: now + ttl })
        .catch(() => undefined);
    }
    return freezeToolResult({ ...result, cache_hit: false });
  };
}
