import { mkdtemp, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RegisteredTool } from "../../src/tools/tool-definition.js";
import { openWorkRepository } from "../../src/work/work-repository.js";
import { createWorkspaceTools } from "../../src/work/workspace-tools.js";
import { gitRepository } from "./git-fixture.js";

async function workspace(allowCommands = false) {
  const root = await gitRepository({ "src/a.txt": "alpha\nbeta\n", ".gitignore": "*.log\n" });
  const tools = createWorkspaceTools({ repository: await openWorkRepository(root), allowCommands });
  const call = (name: string, input: Record<string, unknown>) => {
    const tool = tools.find(
      (candidate) => candidate.manifest.name === `workspace__${name}`,
    ) as RegisteredTool;
    return tool.execute(input, { signal: new AbortController().signal, runId: "run_test", callId: "call_1" });
  };
  return { root, tools, call };
}

describe("workspace tools", () => {
  it("read, write, edit (exact, unique), delete, list and search inside the repository", async () => {
    const { root, call } = await workspace();
    expect((await call("read_file", { path: "src/a.txt" })).text).toBe("alpha\nbeta\n");
    expect((await call("write_file", { path: "new/b.txt", content: "gamma\n" })).isError).toBe(false);
    expect(await readFile(join(root, "new/b.txt"), "utf8")).toBe("gamma\n");
    expect(
      (await call("edit_file", { path: "src/a.txt", old_string: "beta", new_string: "BETA" })).isError,
    ).toBe(false);
    expect(await readFile(join(root, "src/a.txt"), "utf8")).toBe("alpha\nBETA\n");
    const missing = await call("edit_file", { path: "src/a.txt", old_string: "zeta", new_string: "x" });
    expect(missing).toMatchObject({ isError: true, errorCode: "TOOL_EXECUTION_FAILED" });
    await writeFile(join(root, "twice.txt"), "x x\n");
    expect((await call("edit_file", { path: "twice.txt", old_string: "x", new_string: "y" })).isError).toBe(
      true,
    );
    expect(
      (await call("edit_file", { path: "twice.txt", old_string: "x", new_string: "y", replace_all: true }))
        .isError,
    ).toBe(false);
    await writeFile(join(root, "debug.log"), "ignored");
    expect((await call("list_files", {})).text.split("\n")).toEqual([
      ".gitignore",
      "new/b.txt",
      "src/a.txt",
      "twice.txt",
    ]);
    expect((await call("search", { pattern: "gam+a" })).text).toBe("new/b.txt:1:gamma");
    expect((await call("delete_file", { path: "new/b.txt" })).isError).toBe(false);
    await expect(stat(join(root, "new/b.txt"))).rejects.toThrow();
  });

  it("refuse ../, absolute paths, a symlink out and anything in .git, as tool errors", async () => {
    const { root, call } = await workspace();
    const outside = await mkdtemp(join(tmpdir(), "charter-outside-"));
    await writeFile(join(outside, "secret.txt"), "secret");
    await symlink(outside, join(root, "escape"));
    await symlink(join(root, ".git"), join(root, "gitlink"));
    const attacks: [string, Record<string, unknown>][] = [
      ["read_file", { path: "../../etc/passwd" }],
      ["read_file", { path: "/etc/passwd" }],
      ["read_file", { path: join(outside, "secret.txt") }],
      ["read_file", { path: "escape/secret.txt" }],
      ["write_file", { path: "escape/planted.txt", content: "x" }],
      ["write_file", { path: ".git/hooks/pre-commit", content: "#!/bin/sh\nexit 0\n" }],
      ["write_file", { path: "src/../.git/config", content: "" }],
      ["write_file", { path: "gitlink/hooks/post-checkout", content: "" }],
      ["write_file", { path: ".GIT/hooks/pre-push", content: "" }],
      ["delete_file", { path: ".git/HEAD" }],
      ["edit_file", { path: "../outside.txt", old_string: "a", new_string: "b" }],
      ["list_files", { path: "escape" }],
      ["search", { pattern: "secret", path: "../" }],
    ];
    for (const [tool, input] of attacks) {
      const result = await call(tool, input);
      expect({ tool, input, isError: result.isError, code: result.errorCode }).toEqual({
        tool,
        input,
        isError: true,
        code: "WORKSPACE_PATH_REFUSED",
      });
    }
    await expect(stat(join(outside, "planted.txt"))).rejects.toThrow();
    await expect(stat(join(root, ".git/hooks/pre-commit"))).rejects.toThrow();
    expect(await readFile(join(root, ".git/HEAD"), "utf8")).toContain("refs/heads/main");
  });

  it("offer run_command only when the work item allows commands; it runs sh -c in the repository", async () => {
    expect((await workspace(false)).tools.map((tool) => tool.manifest.name)).not.toContain(
      "workspace__run_command",
    );
    const { call } = await workspace(true);
    const result = await call("run_command", { command: "cat src/a.txt | wc -l" });
    expect(result.isError).toBe(false);
    expect(result.text).toMatch(/^exit code 0\n\s*2\n$/);
    expect((await call("run_command", { command: "exit 3" })).text).toContain("exit code 3");
  });
});
