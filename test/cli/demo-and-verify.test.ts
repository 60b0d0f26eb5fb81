import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runDemo } from "../../src/demo/run-demo.js";
import { verifyRunDirectory } from "../../src/transcript/verify-transcript.js";
import { cli } from "./cli-harness.js";

describe("charter demo", () => {
  it("runs the bundled agent through a real multi-turn tool session over HTTP and MCP, and verifies it", async () => {
    const runsDirectory = await mkdtemp(join(tmpdir(), "charter-demo-test-"));
    const run = await cli(["demo", "--runs-dir", runsDirectory]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain("COMPLETED_WITH_TOOLS");
    expect(run.stdout).toContain("| Mechanical keyboard | 89.00 EUR | 14 in stock |");
    expect(run.stdout).toContain("verify: OK");
    expect(run.stdout).toMatch(/tool {2}catalog\/get_stock_and_price ok/);
  });

  it("reports the same facts as a library call: three turns, four tool executions, a verifiable transcript", async () => {
    const runsDirectory = await mkdtemp(join(tmpdir(), "charter-demo-test-"));
    const { result, verification } = await runDemo({ runsDirectory });
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(result.turns).toBe(3);
    expect(result.accounting.filter((entry) => entry.type === "tool")).toHaveLength(3);
    expect(verification?.ok).toBe(true);
  });
});

describe("charter verify", () => {
  it("finds a tampered entry and names it", async () => {
    const runsDirectory = await mkdtemp(join(tmpdir(), "charter-verify-test-"));
    const { result } = await runDemo({ runsDirectory });
    const directory = result.transcript.directory!;
    const path = join(directory, "transcript.jsonl");
    const lines = (await readFile(path, "utf8")).trimEnd().split("\n");
    const entry = JSON.parse(lines[6]!);
    entry.result = { ...entry.result, tampered: true };
    lines[6] = JSON.stringify(entry);
    await writeFile(path, `${lines.join("\n")}\n`);

    const report = await verifyRunDirectory(directory);
    expect(report.ok).toBe(false);
    expect(report.first_bad_entry).toMatchObject({ seq: 6, reason_code: "RESULT_HASH_MISMATCH" });
    const run = await cli(["verify", directory, "--json"]);
    expect(run.exitCode).toBe(1);
    expect(JSON.parse(run.stdout).first_bad_entry.seq).toBe(6);
  });

  it("a missing run is a typed error", async () => {
    const run = await cli(["verify", "run_does_not_exist", "--runs-dir", tmpdir()]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("RUN_NOT_FOUND");
  });
});

describe("charter replay", () => {
  it("replays the demo's recorded run offline to the same outcome and chain head", async () => {
    const runsDirectory = await mkdtemp(join(tmpdir(), "charter-replay-test-"));
    const { result } = await runDemo({ runsDirectory });
    const run = await cli(["replay", result.runId, "--runs-dir", runsDirectory, "--json"]);
    expect(run.exitCode).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ ok: true, outcome: result.outcome, headHash: result.transcript.headHash });
  });
});
