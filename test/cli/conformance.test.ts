import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ConformanceReport } from "../../src/conformance/run-conformance-corpus.js";
import { delayStep } from "../../src/testing/scripted-openai-step.js";
import {
  type ScriptedProviderServer,
  startScriptedProviderServer,
} from "../../src/testing/scripted-provider-server.js";
import { misbehavingModel, wellBehavedModel } from "../conformance/conformance-scripts.js";
import { nodeProcess } from "../node-process.js";
import { agentFile, project, providerConfig } from "./cli-harness.js";

const binary = resolve(import.meta.dirname, "../../dist/cli/main.js");
let server: ScriptedProviderServer | null = null;

afterEach(async () => {
  await server?.close();
  server = null;
});

async function conformanceProject(script: Parameters<typeof startScriptedProviderServer>[0]) {
  server = await startScriptedProviderServer(script);
  return project({
    agent: agentFile("models: [local/test-model]"),
    config: providerConfig(server.baseUrl),
    env: "LOCAL_API_KEY=key-for-conformance-test\n",
  });
}

describe("charter conformance", () => {
  it("runs the corpus against the endpoint and prints one JSON report; exit 0 when every case passes", async () => {
    const files = await conformanceProject({ script: wellBehavedModel });
    const run = await nodeProcess(
      [binary, "conformance", "--config", files.configPath, "--model", "local/test-model", "--json"],
      { cwd: files.directory },
    );
    expect(run.stderr).toBe("");
    expect(run.exitCode).toBe(0);
    const report = JSON.parse(run.stdout) as ConformanceReport;
    expect(report).toMatchObject({ target: "local/test-model", repeat: 1, passed: true });
    expect(report.runs.map((caseRun) => [caseRun.case, caseRun.outcome, caseRun.passed])).toEqual([
      ["required_valid_call", "COMPLETED_WITH_TOOLS", true],
      ["required_malformed", "COMPLETED_WITH_TOOLS", true],
      ["required_narration", "FAILED_PROTOCOL_NO_TOOLS", true],
      ["forbidden_attempted_call", "COMPLETED_CHAT_ONLY", true],
      ["oversized_output", "COMPLETED_WITH_TOOLS", true],
      ["timeout_call", "COMPLETED_WITH_TOOLS", true],
    ]);
    expect(report.metrics.runs).toBe(6);
    // The key from .charter.env went to the endpoint and nowhere into the output.
    expect(server!.requests[0]!.headers.authorization).toBe("Bearer key-for-conformance-test");
    expect(run.stdout).not.toContain("key-for-conformance-test");
  });

  it("prints per case what the model did, the outcome and the verdict, then the baseline over the repeats", async () => {
    const files = await conformanceProject({
      script: [...misbehavingModel("openai-chat"), ...wellBehavedModel],
    });
    const run = await nodeProcess(
      [binary, "conformance", "--config", files.configPath, "--model", "local/test-model", "--repeat", "2"],
      { cwd: files.directory },
    );
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain("charter conformance: local/test-model, 6 cases x 2");
    expect(run.stdout).toContain("PASS  forbidden_attempted_call #1: forbidden tools, attempted tool call");
    expect(run.stdout).toContain("      the model: called_forbidden_tool (called delete_records)");
    expect(run.stdout).toContain("      outcome:   FAILED_CONTRACT_VIOLATION\n");
    expect(run.stdout).toContain("PASS  forbidden_attempted_call #2");
    expect(run.stdout).toContain("      the model: reported_without_tools (called final_report)");
    expect(run.stdout).toContain("Baseline over 12 run(s):");
    // Required-tool runs with no tool executed: three in the first pass, the narration in the second.
    expect(run.stdout).toContain("no-tool-call rate (runs that require a tool)  40.0 %");
    expect(run.stdout).toContain("budget-exhausted exits                        2");
    expect(run.stdout).toContain("12 of 12 run(s) passed: conformant");
  });

  it("exits 1 when a run fails its case (a pass interrupted by SIGINT is never judged a pass)", async () => {
    let requested: () => void = () => {};
    const firstRequest = new Promise<void>((resolveRequest) => {
      requested = resolveRequest;
    });
    const files = await conformanceProject({
      respond: () => {
        requested();
        return delayStep(60_000, { kind: "text", text: "too late" });
      },
    });
    const child = spawn(
      process.execPath,
      [binary, "conformance", "--config", files.configPath, "--model", "local/test-model"],
      { cwd: files.directory, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    const exited = new Promise<number | null>((resolveExit) => child.on("exit", (code) => resolveExit(code)));
    await firstRequest;
    child.kill("SIGINT");
    expect(await exited).toBe(1);
    expect(stdout).toContain("FAIL  required_valid_call #1");
    expect(stdout).toContain(
      "the run was interrupted (the pass was cancelled), so what the model did was not judged",
    );
    expect(stdout).toContain("NOT conformant");
  });

  it("refuses a missing --model, a bad --repeat and a model the configuration does not define with exit 4", async () => {
    const files = await conformanceProject({ script: [] });
    const base = [binary, "conformance", "--config", files.configPath];
    const noModel = await nodeProcess(base, { cwd: files.directory });
    expect(noModel.exitCode).toBe(4);
    expect(noModel.stderr).toContain("ARGUMENT_INVALID: charter conformance needs --model provider/model");
    const badRepeat = await nodeProcess([...base, "--model", "local/test-model", "--repeat", "0"], {
      cwd: files.directory,
    });
    expect(badRepeat.exitCode).toBe(4);
    expect(badRepeat.stderr).toContain("--repeat takes a whole number of at least 1, not '0'");
    const unknown = await nodeProcess([...base, "--model", "local/no-such-model"], { cwd: files.directory });
    expect(unknown.exitCode).toBe(4);
    expect(unknown.stderr).toContain("CONFIGURATION_INVALID");
    expect(server!.requests).toEqual([]);
  });
});
