import { existsSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { charterProcess, recordingWorkspace, records } from "./cli-harness.js";

/**
 * Which run store each command uses: `charter run` and every command that reads runs afterwards (`runs`,
 * `verify`, `replay`, `resume`) pick it by one rule, `--store` > the configuration's `store` >
 * `CHARTER_DATABASE_URL` > `~/.charter/charter.db`. Each command is a real child process with its own working
 * directory and home, as a user would start it from a shell.
 */
let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function recordedKeys(file: string): Promise<string[]> {
  return (await records(file)).map((record) => record.key);
}

/** A workspace whose `.charter.json` names its store; `CHARTER_DATABASE_URL` names another, in another file. */
async function configuredWorkspace(steps: readonly ScriptedStep[], frontmatter: string) {
  server = await startScriptedOpenAIServer({ script: [...steps] });
  const storeDirectory = await mkdtemp(join(tmpdir(), "charter-stores-"));
  const configuredStore = join(storeDirectory, "configured.db");
  const environmentStore = join(storeDirectory, "environment.db");
  const workspace = await recordingWorkspace({
    prefix: "charter-configured-store-",
    baseUrl: server.baseUrl,
    frontmatter,
    body: "Do the task with tools.",
    configuration: { store: { url: `sqlite:${configuredStore}` } },
  });
  const home = await mkdtemp(join(tmpdir(), "charter-home-"));
  const env = { HOME: home, CHARTER_DATABASE_URL: `sqlite:${environmentStore}` };
  const charter = (argv: readonly string[], cwd = workspace.directory) => charterProcess(argv, { cwd, env });
  return { ...workspace, configuredStore, environmentStore, home, charter };
}

describe("the run store named in configuration", () => {
  it("is where `run` stores the run and where `runs`, `resume`, `verify` and `replay` find it, with no --store", async () => {
    const { directory, recordFile, configuredStore, environmentStore, home, charter } =
      await configuredWorkspace(
        [
          {
            kind: "tool_calls",
            calls: [{ id: "call_erase", name: "test__record", arguments: { key: "erase", value: "all" } }],
          },
          {
            kind: "tool_calls",
            calls: [{ name: "final_report", arguments: { format: "markdown", content: "erased" } }],
          },
        ],
        "models: [local/m]\ntools: [test]\ndestructiveTools: [test__record]",
      );
    const first = await charter([
      "run",
      "agent.md",
      "Erase.",
      "--json",
      "--runs-dir",
      join(directory, "runs"),
    ]);
    expect(first.exitCode).toBe(1);
    const stopped = JSON.parse(first.stdout) as AIAgentResult;
    expect(stopped).toMatchObject({ outcome: "INTERRUPTED", error: { code: "APPROVAL_REQUIRED" } });

    const listed = await charter(["runs", "list", "--json"]);
    expect(listed.exitCode).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ runId: stopped.runId, status: "awaiting_approval" }]);
    const shown = await charter(["runs", "show", stopped.runId, "--json"]);
    expect(JSON.parse(shown.stdout)).toMatchObject({ runId: stopped.runId, status: "awaiting_approval" });

    const resumed = await charter(["resume", stopped.runId, "--approve", "call_erase", "--json"]);
    expect(resumed.exitCode).toBe(0);
    const result = JSON.parse(resumed.stdout) as AIAgentResult;
    expect(result).toMatchObject({ outcome: "COMPLETED_WITH_TOOLS", finalReport: { content: "erased" } });
    expect(await recordedKeys(recordFile)).toEqual(["erase"]);

    // The resumed chain is in the configured store only (the run directory holds the run as first written).
    const verified = await charter(["verify", stopped.runId, "--json"]);
    expect(JSON.parse(verified.stdout)).toMatchObject({
      ok: true,
      entries: result.transcript.entries,
      head_hash: result.transcript.headHash,
    });
    const replayed = await charter(["replay", stopped.runId, "--json"]);
    expect(JSON.parse(replayed.stdout)).toMatchObject({
      ok: true,
      outcome: "COMPLETED_WITH_TOOLS",
      headHash: result.transcript.headHash,
    });
    expect(JSON.parse((await charter(["runs", "show", stopped.runId, "--json"])).stdout)).toMatchObject({
      status: "completed",
      chainHead: result.transcript.headHash,
    });

    // Neither CHARTER_DATABASE_URL's store nor the default one was written: the configuration beats both.
    expect(
      JSON.parse((await charter(["runs", "list", "--json", "--store", environmentStore])).stdout),
    ).toEqual([]);
    expect(existsSync(join(home, ".charter", "charter.db"))).toBe(false);
    expect(existsSync(configuredStore)).toBe(true);
  });

  it("yields to --store, is read from --config FILE in another directory, and without it CHARTER_DATABASE_URL decides", async () => {
    const { directory, environmentStore, home, charter } = await configuredWorkspace(
      [
        {
          kind: "tool_calls",
          calls: [{ name: "final_report", arguments: { format: "markdown", content: "ok" } }],
        },
      ],
      "models: [local/m]",
    );
    const flagged = await charter([
      "run",
      "agent.md",
      "Go.",
      "--json",
      "--runs-dir",
      join(directory, "runs"),
      "--store",
      environmentStore,
    ]);
    expect(flagged.exitCode).toBe(0);
    const run = JSON.parse(flagged.stdout) as AIAgentResult;

    // From the workspace, the configured store is read: the run went to the --store one.
    expect(JSON.parse((await charter(["runs", "list", "--json"])).stdout)).toEqual([]);
    const notFound = await charter(["runs", "show", run.runId]);
    expect(notFound.exitCode).toBe(1);
    expect(notFound.stderr).toContain("RUN_NOT_FOUND");
    expect(
      JSON.parse((await charter(["runs", "show", run.runId, "--json", "--store", environmentStore])).stdout),
    ).toMatchObject({ runId: run.runId, chainHead: run.transcript.headHash });

    // From elsewhere (the home directory, with no configuration): CHARTER_DATABASE_URL names the run's store...
    expect(JSON.parse((await charter(["runs", "list", "--json"], home)).stdout)).toMatchObject([
      { runId: run.runId },
    ]);
    // ...unless --config names a configuration with a store.
    expect(
      JSON.parse(
        (await charter(["runs", "list", "--json", "--config", join(directory, ".charter.json")], home))
          .stdout,
      ),
    ).toEqual([]);
  });
});
