import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { type McpHttpTestServer, startMcpHttpTestServer } from "../../src/testing/mcp-http-test-server.js";
import type { McpToolSource } from "../../src/tools/sources/mcp-source.js";

/**
 * For a test file of remote MCP sources: the test servers it starts and the sources it opens are closed after
 * each test, and any promise rejection left unhandled meanwhile fails the file (a dropped connection must never
 * surface as one).
 */
export function useRemoteMcpFixture() {
  const openSources: McpToolSource[] = [];
  const openServers: McpHttpTestServer[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(() => {
    process.on("unhandledRejection", onUnhandled);
  });

  afterEach(async () => {
    await Promise.all(openSources.splice(0).map((source) => source.close()));
    await Promise.all(openServers.splice(0).map((server) => server.close()));
  });

  afterAll(() => {
    process.off("unhandledRejection", onUnhandled);
    expect(unhandled).toEqual([]);
  });

  return {
    /** The rejections left unhandled so far. */
    unhandled: unhandled as readonly unknown[],
    async testServer(options: Parameters<typeof startMcpHttpTestServer>[0] = {}) {
      const server = await startMcpHttpTestServer(options);
      openServers.push(server);
      return server;
    },
    /** Closes the source after the test. */
    track<Source extends McpToolSource>(source: Source): Source {
      openSources.push(source);
      return source;
    },
  };
}
