import { spawn } from "node:child_process";
import { mkdtemp, readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { delayStep } from "../../src/testing/scripted-openai-step.js";
import { stateHash, workingTreeListing } from "../../src/work/state-listing.js";
import type { WorkReceipt } from "../../src/work/work-receipt.js";
import { openWorkRepository } from "../../src/work/work-repository.js";
import type { WorkRunResult } from "../../src/work/work-run-result.js";
import { agentFile, charterBinary, cli, localModelProvider } from "../cli/cli-harness.js";
import { git, gitRepository } from "./git-fixture.js";

let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function hashOf(root: string): Promise<string> {
  return stateHash(await workingTreeListing(await openWorkRepository(root)));
}

describe("crash safety", () => {
  it("kill -9 mid-item, then work recover: the working tree hashes to the before hash, receipt error interrupted", async () => {
    const root = await gitRepository({ "a.txt": "a\n", "gone.txt": "gone\n" });
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
    await writeFile(join(directory, "agent.md"), agentFile("models: [local/m]"));
    await writeFile(
      join(directory, ".charter.json"),
      JSON.stringify({ providers: localModelProvider(server.baseUrl) }),
    );
    const itemPath = join(directory, "item.yaml");
    await writeFile(itemPath, "id: crash\nagent_id: agent.md\ndescription: Change things.\n");
    const beforeHash = await hashOf(root);
    const child = spawn(
      process.execPath,
      [charterBinary, "work", "run", itemPath, "--repo", root, "--runs-dir", join(directory, "runs")],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const exited = new Promise<string | null>((resolveExit) =>
      child.on("exit", (_code, signal) => resolveExit(signal)),
    );
    await changed;
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("half-done\n");

    // A second item on the same working tree while the first holds it: refused.
    const blocked = await cli(["work", "run", itemPath, "--repo", root, "--json"]);
    expect(blocked.exitCode).toBe(1);
    expect(blocked.stderr).toContain("WORK_LOCKED");

    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    expect(await hashOf(root)).not.toBe(beforeHash);

    const recovered = await cli(["work", "recover", "--repo", root, "--json"]);
    expect(recovered.exitCode).toBe(0);
    const recovery = JSON.parse(recovered.stdout) as { kind: string; receipt: WorkReceipt; path: string };
    expect(recovery.kind).toBe("recovered");
    expect(await hashOf(root)).toBe(beforeHash);
    expect(await readFile(join(root, "gone.txt"), "utf8")).toBe("gone\n");
    await expect(stat(join(root, "new"))).rejects.toThrow();
    expect(git(root, "status", "--porcelain")).toBe("");
    expect(recovery.receipt).toMatchObject({
      status: "failure",
      error: "interrupted",
      output_hash: beforeHash,
    });
    const written = JSON.parse(await readFile(recovery.path, "utf8")) as WorkReceipt;
    expect(written.receipt_hash).toBe(recovery.receipt.receipt_hash);
    expect((await cli(["work", "verify", recovery.path, "--json"])).exitCode).toBe(0);
    // Nothing left to recover; the lock is gone.
    expect(JSON.parse((await cli(["work", "recover", "--repo", root, "--json"])).stdout)).toEqual({
      kind: "none",
    });
  });

  it("SIGINT mid-item: the process restores the working tree itself, writes a failure receipt (interrupted), exit 1", async () => {
    const root = await gitRepository({ "a.txt": "a\n", "gone.txt": "gone\n" });
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
        secondRequest();
        return delayStep(3_600_000, { kind: "text", text: "too late" });
      },
    });
    const directory = await mkdtemp(join(tmpdir(), "charter-work-interrupt-"));
    await writeFile(join(directory, "agent.md"), agentFile("models: [local/m]"));
    await writeFile(
      join(directory, ".charter.json"),
      JSON.stringify({ providers: localModelProvider(server.baseUrl) }),
    );
    const itemPath = join(directory, "item.yaml");
    await writeFile(itemPath, "id: interrupted\nagent_id: agent.md\ndescription: Change things.\n");
    const beforeHash = await hashOf(root);
    const child = spawn(
      process.execPath,
      [
        charterBinary,
        "work",
        "run",
        itemPath,
        "--repo",
        root,
        "--json",
        "--runs-dir",
        join(directory, "runs"),
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    const exited = new Promise<number | null>((resolveExit) => child.on("exit", (code) => resolveExit(code)));
    await changed;
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("half-done\n");

    child.kill("SIGINT");
    expect(await exited).toBe(1);
    const result = JSON.parse(stdout) as WorkRunResult;
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
    expect(JSON.parse((await cli(["work", "recover", "--repo", root, "--json"])).stdout)).toEqual({
      kind: "none",
    });
  });
});
