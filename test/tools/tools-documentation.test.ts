import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { expandPlaceholders } from "../../src/config/expand-placeholders.js";
import { mcpServerSchema } from "../../src/config/mcp-server-configuration-schema.js";
import { queueReferenceIssues, queueSchema } from "../../src/config/queue-configuration-schema.js";
import { restToolSchema } from "../../src/config/rest-tool-configuration-schema.js";
import { defaultToolOutputExtractionLimits } from "../../src/tools/builtin/tool-output-extraction.js";
import { defaultMcpReconnectPolicy } from "../../src/tools/sources/mcp-server-definition.js";
import {
  defaultMcpCallTimeoutMs,
  defaultMcpSamplingRequestsPerCall,
  defaultMcpStartTimeoutMs,
} from "../../src/tools/sources/mcp-source.js";
import {
  createRestToolSource,
  defaultRestMaxResponseBytes,
} from "../../src/tools/sources/rest-tool-source.js";

const documentation = new URL("../../docs/tools.md", import.meta.url);

async function documentText(): Promise<string> {
  return readFile(documentation, "utf8");
}

/** The configuration examples: every ```json block with an mcpServers, restTools or queues section. */
function configurationExamples(text: string): Record<string, unknown>[] {
  const blocks = [...text.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => JSON.parse(match[1] as string));
  return blocks.filter(
    (block) => "mcpServers" in block || "restTools" in block || "queues" in block,
  ) as Record<string, unknown>[];
}

describe("docs/tools.md", () => {
  it("lists the defaults the code uses", async () => {
    const text = await documentText();
    const start = text.indexOf("<!-- tools-defaults:start -->");
    const end = text.indexOf("<!-- tools-defaults:end -->");
    expect(start).toBeGreaterThanOrEqual(0);
    const rows = new Map<string, unknown>();
    for (const line of text.slice(start, end).split("\n")) {
      const match = /^\|\s*(.+?)\s*\|\s*`([^`]+)`\s*\|$/.exec(line);
      if (match !== null) rows.set(match[1] as string, JSON.parse(match[2] as string));
    }
    expect(Object.fromEntries(rows)).toEqual({
      "`reconnect.attempts`": defaultMcpReconnectPolicy.attempts,
      "`reconnect.initialDelay` (ms)": defaultMcpReconnectPolicy.initialDelay,
      "`reconnect.maxDelay` (ms)": defaultMcpReconnectPolicy.maxDelay,
      "`requestTimeout` when connecting and listing (ms)": defaultMcpStartTimeoutMs,
      "`requestTimeout` backstop for calls (ms)": defaultMcpCallTimeoutMs,
      "MCP sampling requests per tool call": defaultMcpSamplingRequestsPerCall,
      "REST response body limit (bytes)": defaultRestMaxResponseBytes,
      "`tool_output` extraction: chunks per call": defaultToolOutputExtractionLimits.maxChunks,
      "`tool_output` extraction: bytes per chunk": defaultToolOutputExtractionLimits.chunkBytes,
      "`tool_output` extraction: map steps at once": defaultToolOutputExtractionLimits.concurrency,
    });
  });

  it("shows configuration examples that load and start", async () => {
    const examples = configurationExamples(await documentText());
    expect(examples.length).toBeGreaterThanOrEqual(5);
    for (const example of examples) {
      // Loaded as the configuration loader would: ${VAR} filled, ${parameters.x} left for each call.
      const expanded = expandPlaceholders(example, {
        file: "docs/tools.md",
        fileVariables: new Map([
          ["GITHUB_TOKEN", "github_pat_example"],
          ["EXAMPLE_API_TOKEN", "example-token"],
        ]),
        processEnvironment: {},
      }) as {
        mcpServers?: Record<string, unknown>;
        restTools?: Record<string, unknown>;
        queues?: Record<string, unknown>;
      };
      const mcpServers = Object.fromEntries(
        Object.entries(expanded.mcpServers ?? {}).map(([name, server]) => [
          name,
          mcpServerSchema.parse(server),
        ]),
      );
      const restTools = Object.fromEntries(
        Object.entries(expanded.restTools ?? {}).map(([name, tool]) => [name, restToolSchema.parse(tool)]),
      );
      const queues = Object.fromEntries(
        Object.entries(expanded.queues ?? {}).map(([name, queue]) => [name, queueSchema.parse(queue)]),
      );
      expect(queueReferenceIssues({ queues, mcpServers, restTools })).toEqual([]);
      const tools = await createRestToolSource(restTools).start();
      expect(tools.map((tool) => tool.manifest.name)).toEqual(
        Object.keys(restTools).map((name) => `rest__${name}`),
      );
    }
  });
});
