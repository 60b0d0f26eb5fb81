import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { blake3Hex } from "../../src/foundation/content-hash.js";
import type { ScriptedOpenAIServer } from "../../src/testing/scripted-openai-server.js";
import { stateHash, workingTreeListing } from "../../src/work/state-listing.js";
import type { WorkReceipt } from "../../src/work/work-receipt.js";
import { openWorkRepository } from "../../src/work/work-repository.js";
import { agentFile, localModelProvider, mcpTestServerPath } from "../cli/cli-harness.js";
import { git, gitRepository } from "./git-fixture.js";
import { call, calls, report, workSetup } from "./work-harness.js";

const servers: ScriptedOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function hashOf(root: string): Promise<string> {
  return stateHash(await workingTreeListing(await openWorkRepository(root)));
}

/**
 * A work item whose agent also has the MCP test server (the real MCP SDK over stdio) as tool source `test`; its
 * `record` tool appends to `recordFile`, here a file inside the repository: a change the workspace tools never
 * made.
 */
async function mcpWork(root: string, script: Parameters<typeof workSetup>[0], item: Record<string, unknown>) {
  const work = await workSetup(script, item);
  servers.push(work.server);
  await writeFile(
    join(work.directory, "agent.md"),
    agentFile("models: [local/m]\ntools: [test]\nmaxTurns: 20"),
  );
  await writeFile(
    join(work.directory, ".charter.json"),
    JSON.stringify({
      providers: localModelProvider(work.server.baseUrl),
      mcpServers: {
        test: {
          type: "stdio",
          command: process.execPath,
          args: [mcpTestServerPath],
          env: { CHARTER_TEST_RECORD_FILE: join(root, "notes", "records.jsonl") },
        },
      },
    }),
  );
  return work;
}

describe("a change made through an MCP tool", () => {
  it("is seen by admission (it reads the repository) and admitted with the item's other changes", async () => {
    const root = await gitRepository({ "a.txt": "a\n", "notes/keep.txt": "keep\n" });
    const work = await mcpWork(
      root,
      [
        calls(
          ["test__record", { key: "k", value: "written by the MCP server" }],
          ["workspace__write_file", { path: "a.txt", content: "A\n" }],
        ),
        report("done"),
      ],
      { id: "through-mcp" },
    );
    const { exitCode, result } = await work.run(root);
    expect(result?.status).toBe("success");
    expect(exitCode).toBe(0);
    const written = await readFile(join(root, "notes", "records.jsonl"), "utf8");
    expect(written).toContain("written by the MCP server");
    expect(result?.created_files).toEqual([join(root, "notes/records.jsonl")]);
    expect(result?.modified_files).toEqual([join(root, "a.txt")]);
    expect(result?.metrics).toMatchObject({ tool_ops_count: 2, files_touched: 2 });
    expect(result?.artifact_hashes[join(root, "notes/records.jsonl")]).toBe(blake3Hex(written));
    expect(result?.output_hash).toBe(await hashOf(root));
    const receipt = JSON.parse(await readFile(result?.receipt_path ?? "", "utf8")) as WorkReceipt;
    expect(receipt.created_files).toEqual(["notes/records.jsonl"]);
  });

  it("counts against max_files like any other: denied, and the MCP server's file is removed too", async () => {
    const root = await gitRepository({ "a.txt": "a\n", "notes/keep.txt": "keep\n" });
    const work = await mcpWork(
      root,
      [
        call("workspace__write_file", { path: "a.txt", content: "A\n" }),
        call("test__record", { key: "k", value: "one file too many" }),
        report("done"),
      ],
      { id: "too-wide-through-mcp", constraints: { max_files: 1 } },
    );
    const beforeHash = await hashOf(root);
    const { exitCode, result } = await work.run(root);
    expect(result?.status).toBe("denied");
    expect(result?.denial_reason).toBe("Exceeded max files: 2 > 1");
    expect(exitCode).toBe(6);
    expect(result?.created_files).toEqual([join(root, "notes/records.jsonl")]);
    await expect(stat(join(root, "notes", "records.jsonl"))).rejects.toThrow();
    expect(await readFile(join(root, "notes", "keep.txt"), "utf8")).toBe("keep\n");
    expect(await hashOf(root)).toBe(beforeHash);
    expect(git(root, "status", "--porcelain")).toBe("");
  });

  it("a tool server that fails mid-item fails the item, even if the agent carries on; rolled back, exit 1", async () => {
    const root = await gitRepository({ "a.txt": "a\n", "notes/keep.txt": "keep\n" });
    const work = await mcpWork(
      root,
      [
        calls(
          ["workspace__write_file", { path: "a.txt", content: "A\n" }],
          ["test__record", { key: "k", value: "before the crash" }],
        ),
        // The MCP server exits without answering.
        call("test__crash", {}),
        // What the agent would have done next: never asked for, the item stops at the failed server.
        call("workspace__write_file", { path: "b.txt", content: "b\n" }),
        report("done anyway"),
      ],
      { id: "server-dies" },
    );
    const beforeHash = await hashOf(root);
    const { exitCode, result } = await work.run(root);
    expect(result?.status).toBe("failure");
    expect(result?.error).toBe("A tool server failed during the item: test__crash ended MCP_SERVER_FAILED");
    expect(exitCode).toBe(1);
    expect(work.server.requests.length).toBe(2);
    expect(result?.modified_files).toEqual([join(root, "a.txt")]);
    expect(result?.created_files).toEqual([join(root, "notes/records.jsonl")]);
    expect(await hashOf(root)).toBe(beforeHash);
    expect(git(root, "status", "--porcelain")).toBe("");
  });
});
