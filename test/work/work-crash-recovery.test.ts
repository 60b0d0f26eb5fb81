import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemEnvironment } from "../../src/foundation/environment.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { delayStep } from "../../src/testing/scripted-openai-step.js";
import { readRunDirectory } from "../../src/transcript/read-transcript.js";
import { stateHash, workingTreeListing } from "../../src/work/state-listing.js";
import type { WorkReceipt } from "../../src/work/work-receipt.js";
import { openWorkRepository } from "../../src/work/work-repository.js";
import type { WorkRunResult } from "../../src/work/work-run-result.js";
import { agentFile, charterBinary, cli, localModelProvider, mcpTestServerPath } from "../cli/cli-harness.js";
import { git, gitRepository } from "./git-fixture.js";

let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function hashOf(root: string): Promise<string> {
  return stateHash(await workingTreeListing(await openWorkRepository(root)));
}

interface RunningItem {
  readonly directory: string;
  readonly itemPath: string;
  readonly runsDirectory: string;
  readonly child: ChildProcess;
  /** The exit code and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once the item is mid-way: its first tool calls have run and the model is asked again (never answered). */
  readonly changed: Promise<void>;
  /** Resolves with the run id once the before snapshot is taken (the child's stderr says so). */
  readonly frozen: Promise<string>;
  stdout(): string;
}

/**
 * `charter work run` as a child process on `root`: its agent changes a.txt, creates new/file.txt and deletes
 * gone.txt in one batch, then waits for a model answer that never comes. `agentSettings`/`configuration` add to
 * the agent's front matter and `.charter.json`.
 */
async function startItem(
  root: string,
  options: { agentSettings?: string; configuration?: Record<string, unknown> } = {},
): Promise<RunningItem> {
  let secondRequest: () => void = () => {};
  const changed = new Promise<void>((resolveRequest) => {
    secondRequest = resolveRequest;
  });
  server = await startScriptedOpenAIServer({
    respond: (_request, index) => {
      if (index === 0) {
        return {
          kind: "tool_calls",
          calls: [
            { name: "workspace__write_file", arguments: { path: "a.txt", content: "half-done\n" } },
            { name: "workspace__write_file", arguments: { path: "new/file.txt", content: "new\n" } },
            { name: "workspace__delete_file", arguments: { path: "gone.txt" } },
          ],
        };
      }
      // The tools have run (the model is asked again only after them): the item is mid-way. Never answered.
      secondRequest();
      return delayStep(3_600_000, { kind: "text", text: "too late" });
    },
  });
  const directory = await mkdtemp(join(tmpdir(), "charter-work-crash-"));
  await writeFile(
    join(directory, "agent.md"),
    agentFile(`models: [local/m]${options.agentSettings === undefined ? "" : `\n${options.agentSettings}`}`),
  );
  await writeFile(
    join(directory, ".charter.json"),
    JSON.stringify({ providers: localModelProvider(server.baseUrl), ...options.configuration }),
  );
  const itemPath = join(directory, "item.yaml");
  await writeFile(itemPath, "id: crash\nagent_id: agent.md\ndescription: Change things.\n");
  const runsDirectory = join(directory, "runs");
  const child = spawn(
    process.execPath,
    [charterBinary, "work", "run", itemPath, "--repo", root, "--json", "--runs-dir", runsDirectory],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  let stderr = "";
  const frozen = new Promise<string>((resolveFrozen) => {
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      const match = /work run (\S+): before state/.exec(stderr);
      if (match !== null) resolveFrozen(match[1] as string);
    });
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) =>
    child.on("exit", (code, signal) => resolveExit({ code, signal })),
  );
  return { directory, itemPath, runsDirectory, child, exited, changed, frozen, stdout: () => stdout };
}

async function recover(root: string, ...flags: string[]) {
  const recovered = await cli(["work", "recover", "--repo", root, "--json", ...flags]);
  expect(recovered.exitCode).toBe(0);
  return JSON.parse(recovered.stdout) as { kind: string; receipt: WorkReceipt; path: string };
}

describe("crash safety", () => {
  it("kill -9 mid-item, then work recover: the working tree hashes to the before hash, receipt error interrupted", async () => {
    const root = await gitRepository({ "a.txt": "a\n", "gone.txt": "gone\n" });
    const beforeHash = await hashOf(root);
    const item = await startItem(root);
    const runId = await item.frozen;
    await item.changed;
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("half-done\n");

    // A second item on the same working tree while the first holds it: refused.
    const blocked = await cli(["work", "run", item.itemPath, "--repo", root, "--json"]);
    expect(blocked.exitCode).toBe(1);
    expect(blocked.stderr).toContain("WORK_LOCKED");

    item.child.kill("SIGKILL");
    expect((await item.exited).signal).toBe("SIGKILL");
    expect(await hashOf(root)).not.toBe(beforeHash);

    const recovery = await recover(root);
    expect(recovery.kind).toBe("recovered");
    expect(await hashOf(root)).toBe(beforeHash);
    expect(await readFile(join(root, "gone.txt"), "utf8")).toBe("gone\n");
    await expect(stat(join(root, "new"))).rejects.toThrow();
    expect(git(root, "status", "--porcelain")).toBe("");
    expect(recovery.receipt).toMatchObject({
      status: "failure",
      error: "interrupted",
      run_id: runId,
      output_hash: beforeHash,
    });
    // The contract hash and transcript head are those the run store holds for the run (the default store of
    // this test worker, where the child's run went and where `work recover` looks by default).
    const store = await openRunStore({
      url: process.env.CHARTER_DATABASE_URL as string,
      environment: systemEnvironment,
    });
    try {
      const run = await store.getRun(runId);
      expect(run?.entryCount).toBeGreaterThan(0);
      expect(recovery.receipt.contract_hash).toBe(run?.contractHash);
      expect(recovery.receipt.transcript_head).toBe(run?.headHash);
    } finally {
      await store.close();
    }
    const written = JSON.parse(await readFile(recovery.path, "utf8")) as WorkReceipt;
    expect(written.receipt_hash).toBe(recovery.receipt.receipt_hash);
    expect((await cli(["work", "verify", recovery.path, "--json"])).exitCode).toBe(0);
    // Nothing left to recover; the lock is gone.
    expect(await recover(root)).toEqual({ kind: "none" });
  });

  it("a recovery receipt takes the contract hash and transcript head from the run directory when the store lacks the run", async () => {
    const root = await gitRepository({ "a.txt": "a\n", "gone.txt": "gone\n" });
    const beforeHash = await hashOf(root);
    const item = await startItem(root);
    const runId = await item.frozen;
    await item.changed;
    item.child.kill("SIGKILL");
    await item.exited;
    // Recovered with another (empty) store, from another folder: the lock record names the item's run directory.
    const otherStore = join(await mkdtemp(join(tmpdir(), "charter-other-store-")), "runs.db");
    const recovery = await recover(root, "--store", otherStore);
    expect(recovery.kind).toBe("recovered");
    expect(await hashOf(root)).toBe(beforeHash);
    const run = await readRunDirectory(join(item.runsDirectory, runId));
    expect(run.entries.length).toBeGreaterThan(0);
    expect(recovery.receipt.contract_hash).toBe(run.header.contract_hash);
    expect(recovery.receipt.contract_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(recovery.receipt.transcript_head).toBe(run.entries.at(-1)?.hash);
  });

  it("a process killed before its run started: the recovery receipt has no contract hash or transcript head", async () => {
    const root = await gitRepository({ "a.txt": "a\n", "gone.txt": "gone\n" });
    const beforeHash = await hashOf(root);
    // The agent's tool server never answers: the run waits for it to start, and is never created.
    const item = await startItem(root, {
      agentSettings: "tools: [silent]",
      configuration: {
        mcpServers: {
          silent: {
            type: "stdio",
            command: process.execPath,
            args: [mcpTestServerPath],
            env: { CHARTER_TEST_MCP_SILENT: "1" },
            requestTimeout: 3_600_000,
          },
        },
      },
    });
    const runId = await item.frozen;
    item.child.kill("SIGKILL");
    await item.exited;
    const recovery = await recover(root);
    expect(recovery.kind).toBe("recovered");
    expect(recovery.receipt).toMatchObject({
      run_id: runId,
      status: "failure",
      error: "interrupted",
      contract_hash: null,
      transcript_head: null,
      output_hash: beforeHash,
    });
    expect(server?.requests.length).toBe(0);
    await expect(stat(join(item.runsDirectory, runId))).rejects.toThrow();
  });

  it("SIGINT mid-item: the process restores the working tree itself, writes a failure receipt (interrupted), exit 1", async () => {
    const root = await gitRepository({ "a.txt": "a\n", "gone.txt": "gone\n" });
    const beforeHash = await hashOf(root);
    const item = await startItem(root);
    await item.changed;
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("half-done\n");

    item.child.kill("SIGINT");
    expect((await item.exited).code).toBe(1);
    const result = JSON.parse(item.stdout()) as WorkRunResult;
    expect(result).toMatchObject({ status: "failure", error: "interrupted", output_hash: beforeHash });
    // What the agent had done is recorded, and undone.
    expect(result.modified_files).toEqual([join(root, "a.txt")]);
    expect(result.created_files).toEqual([join(root, "new/file.txt")]);
    expect(result.deleted_files).toEqual([join(root, "gone.txt")]);
    expect(await hashOf(root)).toBe(beforeHash);
    expect(await readFile(join(root, "gone.txt"), "utf8")).toBe("gone\n");
    await expect(stat(join(root, "new"))).rejects.toThrow();
    expect(git(root, "status", "--porcelain")).toBe("");
    const receipt = JSON.parse(await readFile(result.receipt_path, "utf8")) as WorkReceipt;
    expect(receipt).toMatchObject({ status: "failure", error: "interrupted", output_hash: beforeHash });
    expect(receipt.transcript_head).toMatch(/^[0-9a-f]{64}$/);
    expect((await cli(["work", "verify", result.receipt_path, "--json"])).exitCode).toBe(0);
    // Nothing was left for recovery: the process released its lock.
    expect(await recover(root)).toEqual({ kind: "none" });
  });
});
