import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runAgentWithRegistry } from "../../src/agents/run-agent-with-registry.js";
import {
  type RecordedRequest,
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { localModelProvider } from "../cli/cli-harness.js";
import { agentText, projectWith } from "./agent-files.js";

/**
 * The `delegate` tool (`delegation: auto`) against the scripted model server: each agent's system prompt names it,
 * and the model acts by agent and by what its conversation holds.
 */
let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

interface WireMessage {
  role: string;
  content?: string;
}

const report = (content: string): ScriptedStep => ({
  kind: "tool_calls",
  calls: [{ name: "final_report", arguments: { format: "markdown", content } }],
});
const delegate = (task: string): ScriptedStep => ({
  kind: "tool_calls",
  calls: [{ id: "call_delegate", name: "delegate", arguments: { task } }],
});

function agentOf(request: RecordedRequest): { name: string; toolReplies: string[]; tools: string[] } {
  const body = request.body as { messages: WireMessage[]; tools?: { function: { name: string } }[] };
  return {
    name: /I am (\w+)/.exec(body.messages[0]?.content ?? "")?.[1] ?? "unknown",
    toolReplies: body.messages
      .filter((message) => message.role === "tool")
      .map((message) => message.content ?? ""),
    tools: (body.tools ?? []).map((tool) => tool.function.name),
  };
}

async function setUp(files: Record<string, string>, respond: (request: RecordedRequest) => ScriptedStep) {
  server = await startScriptedOpenAIServer({ respond });
  return projectWith({
    ...files,
    ".charter.json": JSON.stringify({
      providers: localModelProvider(server.baseUrl),
      defaults: { models: ["local/m"] },
    }),
  });
}

function run(directory: string, agentPath: string, prompt: string) {
  return runAgentWithRegistry({
    agentPath,
    prompt,
    cwd: directory,
    homeDirectory: directory,
    runsDirectory: join(directory, "runs"),
  });
}

async function contracts(directory: string): Promise<Record<string, unknown>[]> {
  const runs = await readdir(join(directory, "runs"));
  return Promise.all(
    runs.map((runId) => readFile(join(directory, "runs", runId, "contract.json"), "utf8").then(JSON.parse)),
  );
}

describe("the delegate tool", () => {
  it("hands the sub-task to the agent the selector picks, under its own contract recording the selection", async () => {
    const directory = await setUp(
      {
        "agents/lead.md": agentText("delegation: auto", "I am lead."),
        "agents/coder.md": agentText("exampleTasks: [Fix the failing test]\nkeywords: [test]", "I am coder."),
      },
      (request) => {
        const { name, toolReplies } = agentOf(request);
        if (name === "coder") return report("fixed it");
        return toolReplies.length === 0
          ? delegate("Fix the failing test")
          : report(`lead: ${toolReplies[0]}`);
      },
    );
    const result = await run(directory, "lead", "Get the build green.");
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(result.finalReport?.content).toBe("lead: delegated to 'coder' (confidence 0.75):\nfixed it");
    // Only an agent with delegation: auto is offered the tool.
    const offered = server!.requests.map(agentOf);
    expect(offered.find((entry) => entry.name === "lead")?.tools).toContain("delegate");
    expect(offered.find((entry) => entry.name === "coder")?.tools).not.toContain("delegate");
    const child = (await contracts(directory)).find((contract) => contract.agent_id === "coder")!;
    expect(child.parent_contract_hash).toBe(result.contractHash);
    const selection = JSON.parse((child.decisions as Record<string, string>).agent_selection!);
    expect(selection).toEqual({
      selected: "coder",
      candidates: [
        {
          agentId: "coder",
          confidence: 0.75,
          reasons: ['exampleTasks: "Fix the failing test" is the task (+0.6)', 'keywords: "test" (+0.15)'],
        },
      ],
    });
    // The child's accounting joins the parent's, under the delegation's call path.
    expect(result.accounting.some((entry) => entry.callPath === "lead/coder")).toBe(true);
  });

  describe("INV-DT-002 circular delegation detected", () => {
    it("never chooses an agent of the chain, and refuses as circular when nothing else is left", async () => {
      const seen: string[] = [];
      const directory = await setUp(
        {
          // The lead matches the task best, but it is in the chain: the selector passes it over for the fallback.
          "agents/lead.md": agentText("delegation: auto\nexampleTasks: [Plan the release]", "I am lead."),
          "agents/generalist.md": agentText("id: standard\ndelegation: auto", "I am generalist."),
        },
        (request) => {
          const { name, toolReplies } = agentOf(request);
          if (toolReplies.length === 0) return delegate("Plan the release");
          if (name === "generalist") seen.push(toolReplies[0]!);
          return report(`${name} done`);
        },
      );
      const result = await run(directory, "lead", "Plan the release");
      expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatch(/^\(tool failed: .*delegation cycle/);
      expect(seen[0]).toContain("already in the chain lead -> standard");
      // lead asked once, the generalist twice (its delegation, then its report); nobody else ran.
      expect(server!.requests.map((request) => agentOf(request).name)).toEqual([
        "lead",
        "generalist",
        "generalist",
        "lead",
      ]);
    });
  });

  describe("INV-DT-001 delegation blocked at max depth", () => {
    it("refuses a delegation that would go deeper than maxDepth, as a tool error naming the chain", async () => {
      const seen: string[] = [];
      const directory = await setUp(
        {
          "agents/lead.md": agentText("delegation: auto\nmaxDepth: 1", "I am lead."),
          "agents/middle.md": agentText("delegation: auto\nkeywords: [first]", "I am middle."),
          "agents/bottom.md": agentText("keywords: [second]", "I am bottom."),
        },
        (request) => {
          const { name, toolReplies } = agentOf(request);
          if (name === "bottom") return report("should never run");
          if (toolReplies.length === 0)
            return delegate(name === "lead" ? "the first part" : "the second part");
          if (name === "middle") seen.push(toolReplies[0]!);
          return report(`${name} done`);
        },
      );
      const result = await run(directory, "lead", "Do both parts.");
      expect(result.success).toBe(true);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toContain("would exceed maxDepth 1: lead -> middle -> bottom");
      expect(server!.requests.some((request) => agentOf(request).name === "bottom")).toBe(false);
    });
  });

  it("needs a registry: without one, an agent with delegation: auto fails before any inference", async () => {
    const directory = await setUp({ "lead.md": agentText("delegation: auto", "I am lead.") }, () =>
      report("x"),
    );
    const { runAgent } = await import("../../src/runner/run-agent.js");
    const result = await runAgent({ agentPath: join(directory, "lead.md"), prompt: "Go.", cwd: directory });
    expect(result.outcome).toBe("FAILED_PREFLIGHT");
    expect(result.error).toMatchObject({ code: "AGENT_NOT_FOUND" });
    expect(server!.requests).toHaveLength(0);
  });
});
