import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { runAgent } from "../../src/runner/run-agent.js";
import type { ToolAccountingEntry } from "../../src/session/accounting-entry.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { recordingWorkspace } from "../cli/cli-harness.js";

let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

/** Every run: the model makes `calls`, then reports once it has tool results (the server serves any number of runs). */
function callsThenReport(calls: { name: string; arguments: Record<string, unknown> }[]) {
  return (request: { body: unknown }): ScriptedStep => {
    const messages = (request.body as { messages: { role: string }[] }).messages;
    return messages.some((message) => message.role === "tool")
      ? {
          kind: "tool_calls",
          calls: [{ name: "final_report", arguments: { format: "markdown", content: "ok" } }],
        }
      : { kind: "tool_calls", calls };
  };
}

describe("read-only tool cache (issue 4)", () => {
  it("serves read-only tools from the run store within the TTL; never caches other tools; a write through the same server invalidates", async () => {
    // "Read." makes the read-only call; "Read and write." the read-only call, then a write through the same server.
    server = await startScriptedOpenAIServer({
      respond: (request) => {
        const messages = (request.body as { messages: { role: string; content?: string }[] }).messages;
        const prompt = messages.filter((message) => message.role === "user").at(-1)?.content ?? "";
        return callsThenReport([
          { name: "test__echo", arguments: { text: "cached?" } },
          ...(prompt.includes("write")
            ? [{ name: "test__record", arguments: { key: "side", value: "effect" } }]
            : []),
        ])(request);
      },
    });
    const { directory, recordFile } = await recordingWorkspace({
      prefix: "charter-cache-",
      baseUrl: server.baseUrl,
      frontmatter: "models: [local/m]\ntools: [test]",
      body: "Use the tools.",
      configuration: { toolCache: { test: "10m" } },
    });
    const environment = deterministicEnvironment();
    const run = (prompt: string) =>
      runAgent({
        agentPath: join(directory, "agent.md"),
        prompt,
        cwd: directory,
        runsDirectory: join(directory, "runs"),
        store: join(directory, "charter.db"),
        environment,
      });
    const toolEntries = (result: Awaited<ReturnType<typeof run>>) =>
      result.accounting
        .filter((entry): entry is ToolAccountingEntry => entry.type === "tool")
        .map((entry) => [entry.command, entry.cache_hit]);

    const first = await run("Read.");
    expect(first.success).toBe(true);
    expect(toolEntries(first)).toEqual([["echo", false]]);
    const second = await run("Read and write.");
    expect(toolEntries(second)).toEqual([
      ["echo", true],
      ["record", undefined],
    ]);
    expect(second.conversation.find((message) => message.role === "tool")?.content).toBe("cached?");
    // The write went through the same server: what its read-only tools answer may have changed.
    expect(toolEntries(await run("Read."))).toEqual([["echo", false]]);
    // The non-read-only tool ran, once.
    expect((await readFile(recordFile, "utf8")).trim().split("\n")).toHaveLength(1);
    // Past the TTL the cache misses again.
    environment.advance(11 * 60_000);
    expect(toolEntries(await run("Read."))).toEqual([["echo", false]]);
  });

  it("never answers one tenant's call from another tenant's entry; a tenant's entries are removed on their own", async () => {
    server = await startScriptedOpenAIServer({
      respond: callsThenReport([{ name: "test__echo", arguments: { text: "same call" } }]),
    });
    const { directory } = await recordingWorkspace({
      prefix: "charter-cache-tenant-",
      baseUrl: server.baseUrl,
      frontmatter: "models: [local/m]\ntools: [test]",
      body: "Use the tools.",
      configuration: { toolCache: { test: "10m" } },
    });
    const environment = deterministicEnvironment();
    const storePath = join(directory, "charter.db");
    const runFor = async (tenantId: string) => {
      const result = await runAgent({
        agentPath: join(directory, "agent.md"),
        prompt: "Go.",
        cwd: directory,
        runsDirectory: join(directory, "runs"),
        store: storePath,
        tenantId,
        environment,
      });
      expect(result.success).toBe(true);
      return result.accounting.find((entry): entry is ToolAccountingEntry => entry.type === "tool")
        ?.cache_hit;
    };
    expect(await runFor("acme")).toBe(false);
    // Same project, same server, same tool and arguments: another tenant is never served acme's result.
    expect(await runFor("globex")).toBe(false);
    expect(await runFor("acme")).toBe(true);
    expect(await runFor("globex")).toBe(true);

    const store = await openRunStore({ path: storePath, environment });
    try {
      expect(await store.cachePurgeTenant("acme")).toBe(1);
    } finally {
      await store.close();
    }
    expect(await runFor("acme")).toBe(false);
    expect(await runFor("globex")).toBe(true);
  });

  it("never answers one project's call from another project's server of the same name (one store for both)", async () => {
    server = await startScriptedOpenAIServer({
      respond: callsThenReport([{ name: "test__echo", arguments: { text: "same call" } }]),
    });
    const workspace = (prefix: string) =>
      recordingWorkspace({
        prefix,
        baseUrl: server?.baseUrl ?? "",
        frontmatter: "models: [local/m]\ntools: [test]",
        body: "Use the tools.",
        configuration: { toolCache: { test: "10m" } },
      });
    // Both projects call their server `test`, and the same tool with the same arguments; the servers differ.
    const [first, second] = [await workspace("charter-cache-a-"), await workspace("charter-cache-b-")];
    const sharedStore = join(first.directory, "shared.db");
    const environment = deterministicEnvironment();
    const runIn = async (directory: string) => {
      const result = await runAgent({
        agentPath: join(directory, "agent.md"),
        prompt: "Go.",
        cwd: directory,
        runsDirectory: join(directory, "runs"),
        store: sharedStore,
        environment,
      });
      return result.accounting.find((entry): entry is ToolAccountingEntry => entry.type === "tool")
        ?.cache_hit;
    };
    expect(await runIn(first.directory)).toBe(false);
    expect(await runIn(second.directory)).toBe(false);
    expect(await runIn(first.directory)).toBe(true);
    expect(await runIn(second.directory)).toBe(true);
  });
});
