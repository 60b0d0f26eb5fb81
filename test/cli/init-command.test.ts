import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { charterProcess } from "./cli-harness.js";

let server: ScriptedOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("charter init (real processes)", () => {
  it("writes a commented configuration and an agent that Charter's own loader accepts, checked by doctor and run --dry-run", async () => {
    const parent = await mkdtemp(join(tmpdir(), "charter-init-"));
    const directory = join(parent, "project");
    const init = await charterProcess(["init", directory]);
    expect(init.exitCode).toBe(0);
    expect(init.stdout).toContain(`wrote   ${join(directory, ".charter.json")}`);
    expect(init.stdout).toContain(`wrote   ${join(directory, "agent.md")}`);
    const configuration = await readFile(join(directory, ".charter.json"), "utf8");
    expect(configuration).toMatch(/^\/\/ Charter configuration/);
    expect(await readFile(join(directory, ".gitignore"), "utf8")).toContain(".charter.env\n.charter/\n");

    // The written files as they are, with only the provider's address pointed at the scripted server by a
    // higher layer (as a user edits baseUrl): every check passes.
    server = await startScriptedOpenAIServer({ respond: () => ({ kind: "text", text: "ok" }) });
    const override = join(parent, "override.json");
    await writeFile(override, JSON.stringify({ providers: { local: { baseUrl: server.baseUrl } } }));
    const doctor = await charterProcess(["doctor", "agent.md", "--config", override], { cwd: directory });
    expect(doctor.stdout).toContain(
      `ok    configuration: read ${override}, ${join(directory, ".charter.json")}`,
    );
    expect(doctor.stdout).toContain("ok    model local/qwen3:8b");
    expect(doctor.stdout).toContain("ok    endpoint local/qwen3:8b: answered");
    expect(doctor.exitCode).toBe(0);
    const dryRun = await charterProcess(["run", "agent.md", "--dry-run", "--config", override], {
      cwd: directory,
    });
    expect(dryRun.exitCode).toBe(0);
    expect(dryRun.stdout).toMatch(/all \d+ checks passed\n$/);
  }, 90_000);

  it("never overwrites a file: says which it skipped and only adds missing .gitignore lines", async () => {
    const directory = await mkdtemp(join(tmpdir(), "charter-init-"));
    await writeFile(join(directory, ".charter.json"), '{ "providers": {} }\n');
    await writeFile(join(directory, ".gitignore"), "node_modules\n.charter.env");
    const { exitCode, stdout } = await charterProcess(["init"], { cwd: directory });
    expect(exitCode).toBe(0);
    expect(stdout).toContain(`skipped ${join(directory, ".charter.json")} (it exists; left unchanged)`);
    expect(stdout).toContain(`wrote   ${join(directory, "agent.md")}`);
    expect(stdout).toContain(`updated ${join(directory, ".gitignore")} (ignores .charter/)`);
    expect(await readFile(join(directory, ".charter.json"), "utf8")).toBe('{ "providers": {} }\n');
    expect(await readFile(join(directory, ".gitignore"), "utf8")).toBe(
      "node_modules\n.charter.env\n# Charter: API keys (.charter.env) and a local run store (.charter/)\n.charter/\n",
    );
    const again = await charterProcess(["init"], { cwd: directory });
    expect(again.stdout).toContain(`skipped ${join(directory, "agent.md")}`);
    expect(again.stdout).toContain(`skipped ${join(directory, ".gitignore")}`);
  }, 60_000);
});
