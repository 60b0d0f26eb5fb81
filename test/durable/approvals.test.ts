import { readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { blake3Hex } from "../../src/foundation/content-hash.js";
import { resumeStoredRun } from "../../src/runner/resume-stored-run.js";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { cli, localModelProvider, recordingWorkspace } from "../cli/cli-harness.js";
import {
  closeDurableHarness,
  fileSatisfies,
  killChild,
  records,
  runArguments,
  startCharter,
} from "./durable-harness.js";

/**
 * Approvals of destructive calls through the CLI, against the scripted model and the real MCP test server (which
 * records every execution of `record`): a decision applies to the exact call it was given for, once; a refused
 * resume keeps the run waiting; the user sees what they approve.
 */
let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await closeDurableHarness();
  await server?.close();
  server = null;
});

const secret = "sk-approval-secret-4242";

/** A workspace whose agent must have every `test__record` call approved; the provider's key is a secret. */
async function setUp(
  script: readonly ScriptedStep[],
  frontmatter = "destructiveTools: [test__record]",
  configuration: Record<string, unknown> = {},
) {
  server = await startScriptedOpenAIServer({ script });
  const { directory, recordFile } = await recordingWorkspace({
    prefix: "charter-approvals-",
    baseUrl: server.baseUrl,
    frontmatter: `models: [local/m]\ntools: [test]\nmaxTurns: 8\n${frontmatter}`,
    body: "Erase when asked.",
    configuration: {
      providers: { local: { ...localModelProvider(server.baseUrl).local, apiKey: secret } },
      ...configuration,
    },
  });
  const store = join(directory, "charter.db");
  const charter = (argv: readonly string[]) => cli([...argv, "--store", store]);
  const run = (json = true) =>
    charter([
      "run",
      join(directory, "agent.md"),
      "Erase.",
      ...(json ? ["--json"] : []),
      "--runs-dir",
      join(directory, "runs"),
    ]);
  return { directory, recordFile, store, charter, run };
}

function erase(id: string, key: string): ScriptedStep {
  return { kind: "tool_calls", calls: [{ id, name: "test__record", arguments: { key, value: "all" } }] };
}

const finish: ScriptedStep = {
  kind: "tool_calls",
  calls: [{ name: "final_report", arguments: { format: "markdown", content: "done" } }],
};

async function recordedKeys(file: string): Promise<string[]> {
  return (await records(file)).map((record) => record.key);
}

function parsed(output: { stdout: string }): AIAgentResult {
  return JSON.parse(output.stdout);
}

describe("an approval applies to the exact pending call, once", () => {
  it("a later call that reuses the approved call id stops for approval again", async () => {
    const { recordFile, charter, run } = await setUp([
      erase("call_erase", "erase-approved"),
      erase("call_erase", "erase-forged"),
      finish,
    ]);
    const stopped = parsed(await run());
    expect(stopped.error?.code).toBe("APPROVAL_REQUIRED");

    const approved = await charter(["resume", stopped.runId, "--approve", "call_erase", "--json"]);
    const second = parsed(approved);
    expect(second).toMatchObject({ outcome: "INTERRUPTED", error: { code: "APPROVAL_REQUIRED" } });
    expect(second.pendingApprovals).toEqual([
      {
        turn: 2,
        callId: "call_erase",
        tool: "test__record",
        arguments: { key: "erase-forged", value: "all" },
      },
    ]);
    expect(await recordedKeys(recordFile)).toEqual(["erase-approved"]);

    // Approved in turn 2 for what it is, it runs.
    const third = parsed(await charter(["resume", stopped.runId, "--approve", "call_erase", "--json"]));
    expect(third.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(await recordedKeys(recordFile)).toEqual(["erase-approved", "erase-forged"]);
  });

  it("a decision for a call that is not pending is refused, and the run keeps waiting", async () => {
    const { directory, recordFile, store, charter, run } = await setUp([erase("call_erase", "erase")]);
    const stopped = parsed(await run());
    const refused = await charter(["resume", stopped.runId, "--approve", "call_other"]);
    expect(refused.exitCode).toBe(4);
    const error = await resumeStoredRun({
      runId: stopped.runId,
      store,
      approve: ["call_other"],
      cwd: directory,
      homeDirectory: directory,
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "ARGUMENT_INVALID", details: { reason: "not_pending" } });
    const shown = JSON.parse((await charter(["runs", "show", stopped.runId, "--json"])).stdout);
    expect(shown).toMatchObject({ status: "awaiting_approval", statusReason: "approval_required" });
    expect(await recordedKeys(recordFile)).toEqual([]);
  });
});

describe("a tenant's pending approval", () => {
  it("is not found, shown or decided by another tenant; its own tenant approves it", async () => {
    const { directory, recordFile, charter } = await setUp([erase("call_erase", "erase"), finish]);
    const run = (tenant: string[]) => [
      "run",
      join(directory, "agent.md"),
      "Erase.",
      "--json",
      "--runs-dir",
      join(directory, "runs"),
      ...tenant,
    ];
    const stopped = parsed(await charter(run(["--tenant", "acme"])));
    expect(stopped.error?.code).toBe("APPROVAL_REQUIRED");
    for (const stranger of [["--tenant", "globex"], []]) {
      const shown = await charter(["runs", "show", stopped.runId, ...stranger]);
      expect(shown.stderr).toContain("RUN_NOT_FOUND");
      expect(shown.stdout).not.toContain("call_erase");
      for (const decision of ["--approve", "--deny"]) {
        const decided = await charter([
          "resume",
          stopped.runId,
          decision,
          "call_erase",
          "--json",
          ...stranger,
        ]);
        expect(decided.exitCode).toBe(1);
        expect(decided.stderr).toContain("RUN_NOT_FOUND");
      }
    }
    expect(await recordedKeys(recordFile)).toEqual([]);
    const own = ["--tenant", "acme"];
    const shown = JSON.parse((await charter(["runs", "show", stopped.runId, "--json", ...own])).stdout);
    expect(shown).toMatchObject({
      status: "awaiting_approval",
      pendingApprovals: [{ callId: "call_erase" }],
    });
    const approved = parsed(
      await charter(["resume", stopped.runId, "--approve", "call_erase", "--json", ...own]),
    );
    expect(approved).toMatchObject({ outcome: "COMPLETED_WITH_TOOLS" });
    expect(await recordedKeys(recordFile)).toEqual(["erase"]);
  });
});

describe("stored tool outputs of a run stopped for an approval", () => {
  it("are kept while the run waits, read back after the resume, and removed when it ends", async () => {
    const { charter, run } = await setUp(
      [
        {
          kind: "tool_calls",
          calls: [{ id: "call_big", name: "test__big_output", arguments: { lines: 300 } }],
        },
        erase("call_erase", "erase"),
        {
          kind: "tool_calls",
          calls: [
            {
              id: "call_read",
              name: "tool_output",
              arguments: { handle: "out-1", mode: "read", end_line: 2 },
            },
          ],
        },
        finish,
      ],
      "destructiveTools: [test__record]\ntoolResponseMaxBytes: 2000",
    );
    const stopped = parsed(await run());
    expect(stopped.error?.code).toBe("APPROVAL_REQUIRED");
    const folder = join(tmpdir(), `charter-${blake3Hex(stopped.runId).slice(0, 24)}`);
    expect((await readFile(join(folder, "out-1.txt"), "utf8")).split("\n")).toHaveLength(300);

    const resumed = parsed(await charter(["resume", stopped.runId, "--approve", "call_erase", "--json"]));
    expect(resumed.outcome).toBe("COMPLETED_WITH_TOOLS");
    // The resumed process served the handle the first one issued.
    const read = resumed.conversation.find(
      (message) => message.role === "tool" && message.tool_call_id === "call_read",
    );
    expect(JSON.stringify(read)).toContain("line 000001");
    await expect(stat(folder)).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("stored results are reused only for the same turn, call id and request", () => {
  it("after kill -9 mid-call, a later turn that reuses the call ids runs its calls for real", async () => {
    const { directory, recordFile, store, charter } = await setUp(
      [
        {
          kind: "tool_calls",
          calls: [
            { id: "call_0", name: "test__record", arguments: { key: "turn-1", value: "1" } },
            { id: "call_1", name: "test__record_slowly", arguments: { key: "in-flight", ms: 600_000 } },
          ],
        },
        {
          kind: "tool_calls",
          calls: [
            { id: "call_0", name: "test__record", arguments: { key: "turn-2", value: "2" } },
            { id: "call_1", name: "test__record", arguments: { key: "turn-2-again", value: "3" } },
          ],
        },
        finish,
      ],
      "",
    );
    const run = startCharter(runArguments(directory, store), directory);
    await fileSatisfies(recordFile, (text) => text.includes('"in-flight"'));
    await killChild(run);
    const [listed] = JSON.parse((await charter(["runs", "list", "--json"])).stdout) as { runId: string }[];

    const resumed = parsed(await charter(["resume", listed!.runId, "--json"]));
    expect(resumed.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(await recordedKeys(recordFile)).toEqual(["turn-1", "in-flight", "turn-2", "turn-2-again"]);
    // What the model was told is what each call did: turn 1's answers, then turn 2's own, then the report's.
    const replies = resumed.conversation.filter((message) => message.role === "tool");
    expect(replies.map((message) => message.content.slice(0, 30))).toEqual([
      "recorded",
      "(tool failed: outcome unknown:",
      "recorded",
      "recorded",
      "Final report received.",
    ]);
  });
});

describe("the safety settings follow the precedence of every setting", () => {
  it("--set destructiveTools makes a tool the agent file does not name wait for an approval", async () => {
    const { directory, recordFile, charter } = await setUp([erase("call_erase", "erase"), finish], "");
    const runWith = (...set: string[]) =>
      charter([
        "run",
        join(directory, "agent.md"),
        "Erase.",
        "--json",
        "--runs-dir",
        join(directory, "runs"),
        ...set.flatMap((assignment) => ["--set", assignment]),
      ]);
    const stopped = JSON.parse((await runWith("destructiveTools=test__record")).stdout) as AIAgentResult;
    expect(stopped).toMatchObject({ outcome: "INTERRUPTED", error: { code: "APPROVAL_REQUIRED" } });
    expect((await readFile(recordFile, "utf8")).trim()).toBe("");
  });
});

describe("a refused resume keeps the approval state", () => {
  it("a resume refused for a changed contract leaves the run waiting for the same call", async () => {
    const { directory, recordFile, charter, run } = await setUp([erase("call_erase", "erase"), finish]);
    const stopped = parsed(await run());
    const agentPath = join(directory, "agent.md");
    const agentText = await readFile(agentPath, "utf8");
    await writeFile(agentPath, agentText.replace("Erase when asked.", "Erase everything."));

    const refused = parsed(await charter(["resume", stopped.runId, "--approve", "call_erase", "--json"]));
    expect(refused.error?.code).toBe("RUN_NOT_RESUMABLE");
    const shown = JSON.parse((await charter(["runs", "show", stopped.runId, "--json"])).stdout);
    expect(shown).toMatchObject({
      status: "awaiting_approval",
      statusReason: "approval_required",
      pendingApprovals: [{ callId: "call_erase", tool: "test__record" }],
    });

    await writeFile(agentPath, agentText);
    // Without a decision it stops again: the call is still pending, not "in flight".
    const plain = parsed(await charter(["resume", stopped.runId, "--json"]));
    expect(plain.error?.code).toBe("APPROVAL_REQUIRED");
    expect(await recordedKeys(recordFile)).toEqual([]);
    const approved = parsed(await charter(["resume", stopped.runId, "--approve", "call_erase", "--json"]));
    expect(approved.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(await recordedKeys(recordFile)).toEqual(["erase"]);
  });
});

describe("the user sees what they approve", () => {
  it("the stop message and `runs show` name each pending call with its redacted arguments", async () => {
    const { charter, run } = await setUp([
      {
        kind: "tool_calls",
        calls: [{ id: "call_erase", name: "test__record", arguments: { key: "erase", value: secret } }],
      },
    ]);
    const stopped = await run(false);
    expect(stopped.exitCode).toBe(1);
    expect(stopped.stderr).toContain(
      'call_erase  test__record  {"key":"erase","value":"[REDACTED:providers.local.apiKey]"}',
    );
    expect(stopped.stderr).toContain("--approve call_erase");
    expect(stopped.stderr).not.toContain(secret);

    const [listed] = JSON.parse((await charter(["runs", "list", "--json"])).stdout) as { runId: string }[];
    const shown = await charter(["runs", "show", listed!.runId]);
    expect(shown.stdout).toContain(
      'pending: call_erase  test__record  {"key":"erase","value":"[REDACTED:providers.local.apiKey]"}',
    );
    expect(shown.stdout).not.toContain(secret);
    const shownJson = JSON.parse((await charter(["runs", "show", listed!.runId, "--json"])).stdout);
    expect(shownJson.pendingApprovals).toEqual([
      {
        turn: 1,
        callId: "call_erase",
        tool: "test__record",
        arguments: { key: "erase", value: "[REDACTED:providers.local.apiKey]" },
      },
    ]);
  });
});

describe("deny and pre-approval", () => {
  it("`resume --deny` tells the model the user refused; the tool never runs", async () => {
    const { recordFile, charter, run } = await setUp([erase("call_erase", "erase"), finish]);
    const stopped = parsed(await run());
    const denied = parsed(await charter(["resume", stopped.runId, "--deny", "call_erase", "--json"]));
    // The model answered after the refusal; no tool of it ran.
    expect(denied.outcome).toBe("COMPLETED_CHAT_ONLY");
    const reply = denied.conversation.find((message) => message.role === "tool");
    expect(reply?.content.startsWith("(tool failed: denied")).toBe(true);
    expect(await recordedKeys(recordFile)).toEqual([]);
  });

  it("a destructive tool pre-approved in the configuration runs without stopping", async () => {
    const { recordFile, run } = await setUp(
      [erase("call_erase", "erase"), finish],
      "destructiveTools: [test__record]",
      { defaults: { approvedTools: ["test__record"] } },
    );
    const result = parsed(await run());
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(await recordedKeys(recordFile)).toEqual(["erase"]);
  });
});
