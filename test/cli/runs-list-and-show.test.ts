import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { deterministicEnvironment, systemEnvironment } from "../../src/foundation/environment.js";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { charterProcess, recordingWorkspace } from "./cli-harness.js";

/**
 * `charter runs list` and `charter runs show <run-id>` (issue 4): outcome, turns, tools, tokens, cost, duration
 * and chain head of each run, human-readable and with `--json`, checked against a known scripted run.
 */
let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

// Three model calls of 1,000 input and 500 output tokens at $1 and $4 per million: $0.003 each.
const usage = { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 };

describe("charter runs list / runs show", () => {
  it("print the outcome, turns, tools, tokens, cost, duration and chain head of a run", async () => {
    server = await startScriptedOpenAIServer({
      script: [
        { kind: "tool_calls", usage, calls: [{ name: "test__echo", arguments: { text: "hello" } }] },
        { kind: "tool_calls", usage, calls: [{ name: "test__record", arguments: { key: "k", value: "v" } }] },
        {
          kind: "tool_calls",
          usage,
          calls: [{ name: "final_report", arguments: { format: "markdown", content: "echoed, recorded" } }],
        },
      ],
    });
    const { directory } = await recordingWorkspace({
      prefix: "charter-runs-summary-",
      baseUrl: server.baseUrl,
      frontmatter: "models: [local/m]\ntools: [test]",
      body: "Use the tools.",
      configuration: { pricing: { local: { m: { input: 1, output: 4 } } } },
    });
    const store = join(directory, "runs.db");
    const charter = (argv: readonly string[]) =>
      charterProcess([...argv, "--store", store], { cwd: directory });
    const ran = await charter(["run", "agent.md", "Go.", "--json", "--runs-dir", join(directory, "runs")]);
    expect(ran.exitCode).toBe(0);
    const result = JSON.parse(ran.stdout) as AIAgentResult;
    const verified = JSON.parse((await charter(["verify", result.runId, "--json"])).stdout) as {
      head_hash: string;
      entries: number;
    };
    const opened = await openRunStore({ path: store, environment: systemEnvironment });
    const row = await opened.getRun(result.runId);
    await opened.close();
    if (row === null || row.finishedAt === null) throw new Error("the run is not stored as finished");

    const listed = JSON.parse((await charter(["runs", "list", "--json"])).stdout) as Record<
      string,
      unknown
    >[];
    expect(listed).toHaveLength(1);
    const summary = listed[0] as { costUsd: number; durationMs: number; chainHead: string };
    expect(summary).toMatchObject({
      runId: result.runId,
      agentId: "agent",
      status: "completed",
      outcome: "COMPLETED_WITH_TOOLS",
      turns: 3,
      toolsUsed: ["test__echo", "test__record"],
      tokens: { input: 3000, output: 1500 },
      createdAt: new Date(row.createdAt).toISOString(),
      finishedAt: new Date(row.finishedAt).toISOString(),
      durationMs: row.finishedAt - row.createdAt,
      entries: verified.entries,
      chainHead: verified.head_hash,
      contractHash: result.contractHash,
    });
    expect(summary.costUsd).toBeCloseTo(0.009, 12);
    expect(summary.chainHead).toBe(result.transcript.headHash);

    const shown = JSON.parse((await charter(["runs", "show", result.runId, "--json"])).stdout) as {
      finalReport: unknown;
      pendingApprovals: unknown;
    };
    const { finalReport, pendingApprovals, ...shownSummary } = shown;
    expect(shownSummary).toEqual(summary);
    expect(pendingApprovals).toEqual([]);
    expect(finalReport).toMatchObject({ content: "echoed, recorded" });

    const line = (await charter(["runs", "list"])).stdout.trim();
    expect(line.split("  ")).toEqual([
      result.runId,
      "agent",
      "completed",
      "COMPLETED_WITH_TOOLS",
      "turns 3",
      "tools test__echo,test__record",
      "tokens 3000/1500",
      `cost $${summary.costUsd}`,
      `duration ${summary.durationMs}ms`,
      `head ${verified.head_hash}`,
      new Date(row.createdAt).toISOString(),
    ]);
    const shownLines = (await charter(["runs", "show", result.runId])).stdout.split("\n");
    expect(shownLines).toEqual(
      expect.arrayContaining([
        "outcome: COMPLETED_WITH_TOOLS",
        "turns: 3",
        'toolsUsed: ["test__echo","test__record"]',
        'tokens: {"input":3000,"output":1500}',
        `costUsd: ${summary.costUsd}`,
        `durationMs: ${summary.durationMs}`,
        `chainHead: ${verified.head_hash}`,
      ]),
    );
  });

  it("give a run that has not finished no duration", async () => {
    const fixture = resolve(import.meta.dirname, "../fixtures/store/v1/awaiting-approval.json");
    const directory = await mkdtemp(join(tmpdir(), "charter-runs-running-"));
    const store = join(directory, "runs.db");
    const opened = await openRunStore({ path: store, environment: deterministicEnvironment() });
    const run = await opened.importRun(JSON.parse(await readFile(fixture, "utf8")));
    await opened.reopenRun(run.runId, { from: ["awaiting_approval"] }); // as `charter resume` does first
    await opened.close();

    const charter = (argv: readonly string[]) =>
      charterProcess([...argv, "--store", store], { cwd: directory });
    const shown = JSON.parse((await charter(["runs", "show", run.runId, "--json"])).stdout);
    expect(shown).toMatchObject({ status: "running", finishedAt: null, durationMs: null, turns: 2 });
    expect((await charter(["runs", "list"])).stdout).toContain("  duration -  ");
  });
});
