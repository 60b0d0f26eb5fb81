import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ListedTools } from "../../src/runner/list-agent-tools.js";
import { agentFile, charterProcess, mcpTestServerPath } from "./cli-harness.js";

/** A folder with a .charter.json naming the MCP test server and one REST tool; `test__add` configured destructive. */
async function workspace(extra: Record<string, unknown> = {}) {
  const directory = await mkdtemp(join(tmpdir(), "charter-tools-"));
  await writeFile(
    join(directory, ".charter.json"),
    JSON.stringify({
      mcpServers: { test: { type: "stdio", command: process.execPath, args: [mcpTestServerPath] } },
      restTools: {
        weather: {
          method: "GET",
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a REST parameter placeholder Charter fills.
          url: "http://127.0.0.1:9/weather?q=${parameters.city}",
          description: "Current weather of a city.",
          parametersSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        },
      },
      defaults: { destructiveTools: ["test__add"] },
      ...extra,
    }),
  );
  return directory;
}

describe("charter tools (real processes)", () => {
  it("lists every configured tool as the model sees it, with parameters and idempotency class and why", async () => {
    const directory = await workspace();
    const { exitCode, stdout, stderr } = await charterProcess(["tools", "--json"], { cwd: directory });
    expect(stderr).toBe("");
    expect(exitCode).toBe(0);
    const listed = JSON.parse(stdout) as ListedTools;
    const byName = new Map(listed.tools.map((tool) => [tool.name, tool]));
    expect(byName.get("test__echo")).toMatchObject({
      server: "test",
      description: "Returns its text unchanged.",
      parameters: [{ name: "text", type: "string", required: true }],
      idempotency: "read_only",
      idempotencyFrom: "annotation",
      reason: "annotation from the server: readOnlyHint",
    });
    expect(byName.get("test__big_output")?.parameters).toEqual([
      { name: "lines", type: "integer", required: true },
      { name: "width", type: "integer", required: false },
    ]);
    // Configuration overrides what the server declares, and says so.
    expect(byName.get("test__add")).toMatchObject({
      idempotency: "destructive",
      idempotencyFrom: "configuration",
    });
    expect(byName.get("test__add")?.reason).toContain("destructiveTools names test__add");
    expect(byName.get("test__record")).toMatchObject({ idempotency: "unknown", idempotencyFrom: "default" });
    expect(byName.get("rest__weather")).toMatchObject({
      idempotency: "read_only",
      parameters: [{ name: "city", type: "string", required: true }],
    });

    const human = await charterProcess(["tools"], { cwd: directory });
    expect(human.exitCode).toBe(0);
    expect(human.stdout).toContain(
      "test__echo  [read-only]\n  Returns its text unchanged.\n  parameters: text: string\n",
    );
    expect(human.stdout).toContain("test__big_output  [read-only]");
    expect(human.stdout).toContain("parameters: lines: integer, width?: integer");
    expect(human.stdout).toContain("test__add  [destructive]");
    // Two processes that each start a tool server: generous on a loaded machine.
  }, 90_000);

  it("with an agent file, lists only the tools its tools list selects, under the agent's own idempotency lists", async () => {
    const directory = await workspace();
    const agentPath = join(directory, "agent.md");
    await writeFile(
      agentPath,
      agentFile("models: [local/m]\ntools: [test__echo, test__record]\nidempotentTools: [test__record]"),
    );
    const { exitCode, stdout } = await charterProcess(["tools", agentPath, "--json"], { cwd: directory });
    expect(exitCode).toBe(0);
    const listed = JSON.parse(stdout) as ListedTools;
    expect(listed.tools.map((tool) => tool.name)).toEqual(["test__echo", "test__record"]);
    expect(listed.tools[1]).toMatchObject({ idempotency: "idempotent", idempotencyFrom: "configuration" });
  });

  it("a tool server that cannot start is exit code 3, naming the server", async () => {
    const directory = await workspace({
      mcpServers: { broken: { type: "stdio", command: join(tmpdir(), "no-such-charter-server") } },
    });
    const { exitCode, stderr } = await charterProcess(["tools"], { cwd: directory });
    expect(exitCode).toBe(3);
    expect(stderr).toContain("MCP_SERVER_FAILED");
    expect(stderr).toContain("broken");
  });
});
