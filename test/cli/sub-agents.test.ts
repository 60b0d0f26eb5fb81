import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runAgent } from "../../src/runner/run-agent.js";
import {
  type RecordedRequest,
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { localModelProvider } from "./cli-harness.js";

interface WireMessage {
  role: string;
  content?: string;
  tool_call_id?: string;
}

let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const report = (content: string): ScriptedStep => ({
  kind: "tool_calls",
  calls: [{ name: "final_report", arguments: { format: "markdown", content } }],
});

/** Each agent's system prompt names it; the scripted model acts by agent and by what the conversation holds. */
function agentOf(request: RecordedRequest): { name: string; toolReplies: string[] } {
  const messages = (request.body as { messages: WireMessage[] }).messages;
  const name = /I am (\w+)/.exec(messages[0]?.content ?? "")?.[1] ?? "unknown";
  return {
    name,
    toolReplies: messages
      .filter((message) => message.role === "tool")
      .map((message) => message.content ?? ""),
  };
}

async function setUp(files: Record<string, string>, respond: (request: RecordedRequest) => ScriptedStep) {
  server = await startScriptedOpenAIServer({ respond });
  const directory = await mkdtemp(join(tmpdir(), "charter-subagents-"));
  for (const [name, text] of Object.entries(files)) await writeFile(join(directory, name), text);
  await writeFile(
    join(directory, ".charter.json"),
    JSON.stringify({ providers: localModelProvider(server.baseUrl) }),
  );
  return directory;
}

const agent = (name: string, extra = "") => `---\nmodels: [local/m]\n${extra}\n---\nI am ${name}.\n`;

// seed 003 (delegation)
describe("sub-agents", () => {
  it("runs a child session under its own contract and returns its report as the tool result, with trace ids", async () => {
    const directory = await setUp(
      { "parent.md": agent("parent", "agents: [./child.md]"), "child.md": agent("child") },
      (request) => {
        const { name, toolReplies } = agentOf(request);
        if (name === "child") return report("child says 42");
        return toolReplies.length === 0
          ? {
              kind: "tool_calls",
              calls: [
                { id: "call_delegate", name: "agent__child", arguments: { prompt: "What is the answer?" } },
              ],
            }
          : report(`parent relays: ${toolReplies[0]}`);
      },
    );
    const result = await runAgent({
      agentPath: join(directory, "parent.md"),
      prompt: "Ask the child.",
      cwd: directory,
      runsDirectory: join(directory, "runs"),
    });
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(result.finalReport?.content).toBe("parent relays: child says 42");
    const childEntries = result.accounting.filter((entry) => entry.callPath === "parent/child");
    expect(childEntries.length).toBeGreaterThan(0);
    for (const entry of childEntries) {
      expect(entry).toMatchObject({
        parentTxnId: `${result.runId}/call_delegate`,
        originTxnId: `${result.runId}/call_delegate`,
      });
    }
    // The child ran under its own contract, linked to the parent's.
    const runs = await readdir(join(directory, "runs"));
    const contracts = await Promise.all(
      runs.map((run) => readFile(join(directory, "runs", run, "contract.json"), "utf8").then(JSON.parse)),
    );
    const child = contracts.find((contract) => contract.agent_id === "child");
    expect(child.parent_contract_hash).toBe(result.contractHash);
    expect(child.contract_hash).not.toBe(result.contractHash);
  });

  it("refuses circular delegation as a tool error naming the chain, never an exception", async () => {
    const seen: string[] = [];
    const directory = await setUp(
      {
        "parent.md": agent("parent", "agents: [./child.md]"),
        "child.md": agent("child", "agents: [./parent.md]"),
      },
      (request) => {
        const { name, toolReplies } = agentOf(request);
        if (name === "child") {
          if (toolReplies.length === 0)
            return { kind: "tool_calls", calls: [{ name: "agent__parent", arguments: { prompt: "loop" } }] };
          seen.push(toolReplies[0]!);
          return report("could not delegate back");
        }
        return toolReplies.length === 0
          ? { kind: "tool_calls", calls: [{ name: "agent__child", arguments: { prompt: "go" } }] }
          : report("done");
      },
    );
    const result = await runAgent({
      agentPath: join(directory, "parent.md"),
      prompt: "Start.",
      cwd: directory,
      runsDirectory: join(directory, "runs"),
    });
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(seen).toHaveLength(1);
    expect(seen[0]).toContain("parent -> child -> parent");
    expect(seen[0]!.startsWith("(tool failed:")).toBe(true);
  });

  it("refuses delegation deeper than maxDepth", async () => {
    const seen: string[] = [];
    const directory = await setUp(
      {
        "parent.md": agent("parent", "agents: [./child.md]\nmaxDepth: 1"),
        "child.md": agent("child", "agents: [./grandchild.md]"),
        "grandchild.md": agent("grandchild"),
      },
      (request) => {
        const { name, toolReplies } = agentOf(request);
        if (name === "grandchild") return report("should never run");
        if (name === "child") {
          if (toolReplies.length === 0)
            return {
              kind: "tool_calls",
              calls: [{ name: "agent__grandchild", arguments: { prompt: "deeper" } }],
            };
          seen.push(toolReplies[0]!);
          return report("stopped at depth");
        }
        return toolReplies.length === 0
          ? { kind: "tool_calls", calls: [{ name: "agent__child", arguments: { prompt: "go" } }] }
          : report("done");
      },
    );
    const result = await runAgent({
      agentPath: join(directory, "parent.md"),
      prompt: "Start.",
      cwd: directory,
      runsDirectory: join(directory, "runs"),
    });
    expect(result.success).toBe(true);
    expect(seen[0]).toContain("maxDepth 1");
    expect(seen[0]).toContain("parent -> child -> grandchild");
    expect(server!.requests.some((request) => agentOf(request).name === "grandchild")).toBe(false);
  });
});
