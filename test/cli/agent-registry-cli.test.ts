import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type RecordedRequest,
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { agentText, projectWith } from "../agents/agent-files.js";
import { charterProcess, localModelProvider, mcpTestServerPath } from "./cli-harness.js";

/**
 * The registry as a user meets it: `charter agents ...` and `charter run <agent-id>` as real processes started in a
 * project folder, against the scripted model server.
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

function messagesOf(request: RecordedRequest): WireMessage[] {
  return (request.body as { messages: WireMessage[] }).messages;
}

/** The system prompt's first line: which agent the scripted model is answering. */
function systemLine(request: RecordedRequest): string {
  return (messagesOf(request)[0]?.content ?? "").split("\n")[0] ?? "";
}

/** A project with `.charter.json` (the scripted server as `local/m`, the default model) and these files. */
async function project(files: Record<string, string>, configuration: Record<string, unknown> = {}) {
  const directory = await projectWith({
    ...files,
    ".charter.json": JSON.stringify({
      providers: localModelProvider(server!.baseUrl),
      defaults: { models: ["local/m"] },
      ...configuration,
    }),
  });
  const charter = (argv: readonly string[]) =>
    charterProcess(argv, {
      cwd: directory,
      env: { HOME: directory, CHARTER_DATABASE_URL: `sqlite:${join(directory, "charter.db")}` },
    });
  return { directory, charter };
}

describe("charter agents list, show and validate", () => {
  it("lists the registry (files and the built-in standard agent) and shows one agent, as text and JSON", async () => {
    server = await startScriptedOpenAIServer({ script: [] });
    const { directory, charter } = await project({
      "agents/researcher.md": agentText(
        "description: Finds sources\nkeywords: [research]\nexampleTasks: [Find papers on X]",
        "I research.",
      ),
      "agents/old.md": agentText("enabled: false"),
    });
    const listed = await charter(["agents", "list", "--json"]);
    expect(listed.exitCode).toBe(0);
    const agents = JSON.parse(listed.stdout) as { id: string; enabled: boolean; path: string | null }[];
    expect(agents.map(({ id, enabled, path }) => ({ id, enabled, path }))).toEqual([
      { id: "old", enabled: false, path: join(directory, "agents", "old.md") },
      { id: "researcher", enabled: true, path: join(directory, "agents", "researcher.md") },
      { id: "standard", enabled: true, path: null },
    ]);
    const text = await charter(["agents", "list"]);
    expect(text.stdout.split("\n")[0]).toMatch(/^old\s+disabled\s+agents\/old\.md$/);
    expect(text.stdout).toContain("(built-in)");

    const shown = JSON.parse((await charter(["agents", "show", "researcher", "--json"])).stdout);
    expect(shown).toMatchObject({
      id: "researcher",
      description: "Finds sources",
      keywords: ["research"],
      exampleTasks: ["Find papers on X"],
      systemPrompt: "I research.",
      builtIn: false,
    });
    const standard = await charter(["agents", "show", "standard"]);
    expect(standard.stdout).toContain("file:          (built-in)");
    expect(standard.stdout).toContain("You are a careful general-purpose assistant.");

    const unknown = await charter(["agents", "show", "reseacher"]);
    expect(unknown.exitCode).toBe(4);
    expect(unknown.stderr).toContain("AGENT_NOT_FOUND");
    expect(unknown.stderr).toContain("did you mean researcher?");
  });

  it("validate lists every problem in every file and exits 4; a clean registry exits 0", async () => {
    server = await startScriptedOpenAIServer({ script: [] });
    const { charter, directory } = await project({
      "agents/good.md": agentText("agents: [helper, ./missing.md, nobody]"),
      "agents/helper.md": agentText("description: helps"),
      "agents/typo.md": agentText("maxTurn: 3\nkeywords: 5"),
      "agents/twin.md": agentText("id: helper"),
    });
    const validated = await charter(["agents", "validate"]);
    expect(validated.exitCode).toBe(4);
    const lines = validated.stdout.trim().split("\n");
    expect(lines).toEqual([
      expect.stringMatching(
        /^agents\/twin\.md: id: agent id 'helper' is defined twice: .* \[AGENT_ID_DUPLICATE\]$/,
      ),
      expect.stringMatching(/^agents\/typo\.md:3: keywords: .*\[AGENT_FILE_INVALID\]$/),
      'agents/typo.md:2: maxTurn: unknown key "maxTurn"; did you mean maxTurns? [AGENT_FILE_INVALID]',
      expect.stringMatching(
        /^agents\/good\.md: agents\[1\]: sub-agent '\.\/missing\.md': .*\[AGENT_FILE_INVALID\]$/,
      ),
      expect.stringMatching(/^agents\/good\.md: agents\[2\]: sub-agent 'nobody': .*\[AGENT_NOT_FOUND\]$/),
      "5 problems in 3 of 4 agent files",
    ]);
    const json = JSON.parse((await charter(["agents", "validate", "--json"])).stdout);
    expect(json.ok).toBe(false);
    expect(json.problems).toHaveLength(5);
    expect(json.problems[0]).toMatchObject({ file: join(directory, "agents", "twin.md"), key: "id" });

    // Listing or running from a registry with problems is refused (exit 4), pointing at validate.
    const listed = await charter(["agents", "list"]);
    expect(listed.exitCode).toBe(4);
    expect(listed.stderr).toContain("charter agents validate lists them all");

    const clean = await project({ "agents/helper.md": agentText("") });
    const ok = await clean.charter(["agents", "validate"]);
    expect(ok.exitCode).toBe(0);
    expect(ok.stdout).toBe("ok: 1 agent file, 2 agents (helper, standard)\n");
  });
});

describe("charter run <agent-id>", () => {
  it("runs a registry agent by id, and its sub-agents named by id", async () => {
    server = await startScriptedOpenAIServer({
      respond: (request) => {
        const line = systemLine(request);
        if (line === "I am the helper.") return report("helper says 42");
        const replies = messagesOf(request).filter((message) => message.role === "tool");
        return replies.length === 0
          ? { kind: "tool_calls", calls: [{ name: "agent__helper", arguments: { prompt: "answer?" } }] }
          : report(`lead relays: ${replies[0]?.content}`);
      },
    });
    const { directory, charter } = await project({
      "agents/lead.md": agentText("agents: [helper]", "I am the lead."),
      "agents/helper-file.md": agentText("id: helper", "I am the helper."),
    });
    const run = await charter([
      "run",
      "lead",
      "Ask the helper.",
      "--json",
      "--runs-dir",
      join(directory, "runs"),
    ]);
    expect(run.exitCode).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result.finalReport.content).toBe("lead relays: helper says 42");
    const contract = JSON.parse(
      await readFile(join(directory, "runs", result.runId, "contract.json"), "utf8"),
    );
    expect(contract.agent_id).toBe("lead");
    expect(contract.system_prompt).toBe("I am the lead.");
  });

  it("runs the built-in standard agent on the configured default model", async () => {
    server = await startScriptedOpenAIServer({ script: [report("standard answer")] });
    const { charter } = await project({});
    const run = await charter(["run", "standard", "What is 6 x 7?", "--json"]);
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout).finalReport.content).toBe("standard answer");
    expect(systemLine(server.requests[0]!)).toBe("You are a careful general-purpose assistant.");
  });

  it("checks an agent named by id with run --dry-run (doctor), the built-in one included", async () => {
    server = await startScriptedOpenAIServer({ respond: () => ({ kind: "text", text: "ok" }) });
    const { directory, charter } = await project({ "agents/reviewer.md": agentText("models: [local/m]") });
    const checked = await charter(["run", "reviewer", "--dry-run", "--json"]);
    expect(checked.exitCode).toBe(0);
    const { checks } = JSON.parse(checked.stdout) as { checks: { check: string; detail: string }[] };
    expect(checks.find((check) => check.check === "agent")?.detail).toBe(
      `${join(directory, "agents", "reviewer.md")} (agent reviewer)`,
    );
    const auto = await charter(["run", "auto", "--dry-run"]);
    expect(auto.exitCode).toBe(4);
    expect(auto.stderr).toContain("charter agents select");
    const builtIn = JSON.parse((await charter(["doctor", "standard", "--json"])).stdout);
    expect(builtIn.checks[1]).toMatchObject({ check: "agent", ok: true, detail: "built-in agent standard" });
  });

  it("refuses an unknown or disabled id before anything runs (exit 4)", async () => {
    server = await startScriptedOpenAIServer({ script: [] });
    const { charter } = await project({
      "agents/reviewer.md": agentText(""),
      "agents/retired.md": agentText("enabled: false"),
    });
    const unknown = await charter(["run", "reviewr", "Go."]);
    expect(unknown.exitCode).toBe(4);
    expect(unknown.stderr).toContain("did you mean reviewer?");
    const disabled = await charter(["run", "retired", "Go."]);
    expect(disabled.exitCode).toBe(4);
    expect(disabled.stderr).toContain("AGENT_DISABLED");
    expect(server.requests).toHaveLength(0);
  });

  it("resumes a run of the built-in standard agent, which records its id instead of a file", async () => {
    server = await startScriptedOpenAIServer({
      script: [
        {
          kind: "tool_calls",
          calls: [{ id: "call_erase", name: "test__record", arguments: { key: "k", value: "v" } }],
        },
        report("erased"),
      ],
    });
    const { charter } = await project(
      {},
      {
        mcpServers: { test: { type: "stdio", command: process.execPath, args: [mcpTestServerPath] } },
        defaults: { models: ["local/m"], tools: ["test"], destructiveTools: ["test__record"] },
      },
    );
    const stopped = JSON.parse((await charter(["run", "standard", "Erase.", "--json"])).stdout);
    expect(stopped.error.code).toBe("APPROVAL_REQUIRED");
    const resumed = await charter(["resume", stopped.runId, "--approve", "call_erase", "--json"]);
    expect(resumed.exitCode).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      outcome: "COMPLETED_WITH_TOOLS",
      runId: stopped.runId,
    });
  });
});

describe("selection: charter agents select and charter run auto", () => {
  const team = {
    "agents/researcher.md": agentText(
      "description: Finds and summarises sources\nkeywords: [research, papers]\nexampleTasks: [Find recent papers]\nnotForTasks: [write code]",
      "I am the researcher.",
    ),
    "agents/coder.md": agentText(
      "description: Writes and fixes code\nkeywords: [code, bug]\nexampleTasks: [Fix the failing test]",
      "I am the coder.",
    ),
  };

  it("agents select ranks the agents, the same bytes every time", async () => {
    server = await startScriptedOpenAIServer({ script: [] });
    const { charter } = await project(team);
    const task = "Find recent papers on code review";
    const first = await charter(["agents", "select", task, "--json"]);
    const second = await charter(["agents", "select", task, "--json"]);
    expect(first.exitCode).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(JSON.parse(first.stdout)).toEqual([
      {
        agentId: "researcher",
        confidence: 0.55,
        reasons: [
          'exampleTasks: the task contains "Find recent papers" (+0.4)',
          'keywords: "papers" (+0.15)',
        ],
      },
      {
        agentId: "coder",
        confidence: 0.2,
        reasons: ['keywords: "code" (+0.15)', 'description: shares "code" (+0.05)'],
      },
    ]);
    const limited = await charter(["agents", "select", task, "--limit", "1"]);
    expect(limited.stdout).toBe(
      'researcher  0.550\n            exampleTasks: the task contains "Find recent papers" (+0.4)\n            keywords: "papers" (+0.15)\n',
    );
    expect((await charter(["agents", "select", "Bake bread", "--json"])).stdout).toBe(
      '[{"agentId":"standard","confidence":0.5,"reasons":["no agent matched the task: standard is the fallback (+0.5)"]}]\n',
    );
    expect((await charter(["agents", "select"])).exitCode).toBe(4);
    expect((await charter(["agents", "list", "--limit", "2"])).exitCode).toBe(4);
  });

  it("run auto runs the top candidate and records the selection in the contract's decisions, hashed and verified", async () => {
    server = await startScriptedOpenAIServer({
      respond: (request) => report(`${systemLine(request)} answered`),
    });
    const { directory, charter } = await project(team);
    const task = "Fix the failing test";
    const run = await charter(["run", "auto", task, "--json", "--runs-dir", join(directory, "runs")]);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toContain(
      'charter: auto selected coder (confidence 0.6): exampleTasks: "Fix the failing test" is the task (+0.6)',
    );
    const result = JSON.parse(run.stdout);
    expect(result.finalReport.content).toBe("I am the coder. answered");
    const contract = JSON.parse(
      await readFile(join(directory, "runs", result.runId, "contract.json"), "utf8"),
    );
    expect(contract.contract_hash).toBe(result.contractHash);
    const selected = JSON.parse((await charter(["agents", "select", task, "--json"])).stdout);
    expect(JSON.parse(contract.decisions.agent_selection)).toEqual({
      selected: "coder",
      candidates: selected,
    });
    // The selection is in the hashed content: the run verifies, and its contract differs from `run coder`'s.
    const verified = await charter(["verify", result.runId]);
    expect(verified.exitCode).toBe(0);
    const named = JSON.parse((await charter(["run", "coder", task, "--json"])).stdout);
    expect(named.contractHash).not.toBe(result.contractHash);

    const fallback = JSON.parse((await charter(["run", "auto", "Bake bread", "--json"])).stdout);
    expect(fallback.finalReport.content).toBe("You are a careful general-purpose assistant. answered");
  });

  it("resumes a run auto chose under the recorded selection, though the registry changed since", async () => {
    server = await startScriptedOpenAIServer({
      script: [
        {
          kind: "tool_calls",
          calls: [{ id: "call_erase", name: "test__record", arguments: { key: "k", value: "v" } }],
        },
        report("erased"),
      ],
    });
    const { directory, charter } = await project(
      {
        "agents/eraser.md": agentText(
          "keywords: [erase]\ntools: [test]\ndestructiveTools: [test__record]",
          "I am the eraser.",
        ),
      },
      { mcpServers: { test: { type: "stdio", command: process.execPath, args: [mcpTestServerPath] } } },
    );
    const stopped = JSON.parse((await charter(["run", "auto", "Erase the cache", "--json"])).stdout);
    expect(stopped.error.code).toBe("APPROVAL_REQUIRED");
    // Another agent that would now win the selection: the resumed run keeps the agent and contract it started with.
    const { writeFile } = await import("node:fs/promises");
    await writeFile(join(directory, "agents", "cleaner.md"), agentText("exampleTasks: [Erase the cache]"));
    const resumed = await charter(["resume", stopped.runId, "--approve", "call_erase", "--json"]);
    expect(resumed.exitCode).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      outcome: "COMPLETED_WITH_TOOLS",
      contractHash: stopped.contractHash,
    });
  });
});

describe("charter run with delegation: auto", () => {
  it("offers the delegate tool, which runs the agent selection picks for the sub-task", async () => {
    server = await startScriptedOpenAIServer({
      respond: (request) => {
        const line = systemLine(request);
        if (line === "I am the coder.") return report("patched");
        const replies = messagesOf(request).filter((message) => message.role === "tool");
        return replies.length === 0
          ? {
              kind: "tool_calls",
              calls: [{ name: "delegate", arguments: { task: "Fix the bug in the parser" } }],
            }
          : report(`lead relays: ${replies[0]?.content}`);
      },
    });
    const { charter } = await project({
      "agents/lead.md": agentText("delegation: auto", "I am the lead."),
      "agents/coder.md": agentText("keywords: [bug, parser]", "I am the coder."),
    });
    const run = await charter(["run", "lead", "Make the parser work.", "--json"]);
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout).finalReport.content).toBe(
      "lead relays: delegated to 'coder' (confidence 0.3):\npatched",
    );
  });
});
