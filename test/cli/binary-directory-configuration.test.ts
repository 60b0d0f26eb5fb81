import { mkdir, mkdtemp, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { agentFile, charterBinary, charterProcess, localModelProvider } from "./cli-harness.js";

let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe("configuration layer 4: the directory of the charter command", () => {
  it("a provider configured only in <command directory>/.charter.json is used, through a symlinked `charter`", async () => {
    server = await startScriptedOpenAIServer({
      script: [{ kind: "text", text: "configured beside the binary" }],
    });
    const root = await mkdtemp(join(tmpdir(), "charter-binary-layer-"));
    // As npm links the bin: `<bin>/charter` -> `.../dist/cli/main.js`, with the configuration beside the link.
    const bin = join(root, "bin");
    const agents = join(root, "agents");
    const work = join(root, "work");
    for (const directory of [bin, agents, work]) await mkdir(directory);
    await symlink(charterBinary, join(bin, "charter"));
    await writeFile(
      join(bin, ".charter.json"),
      // The store too: every command run through this `charter` must find the runs there (not in HOME's).
      JSON.stringify({
        providers: localModelProvider(server.baseUrl),
        store: { path: join(bin, "runs.db") },
      }),
    );
    await writeFile(join(agents, "agent.md"), agentFile("models: [local/m]"));

    const run = await charterProcess(
      [
        "run",
        join(agents, "agent.md"),
        "Say where you are configured.",
        "--json",
        "--runs-dir",
        join(root, "runs"),
      ],
      { script: join(bin, "charter"), cwd: work, env: { HOME: root } },
    );
    const result = JSON.parse(run.stdout) as AIAgentResult;
    expect(result).toMatchObject({
      success: true,
      outcome: "COMPLETED_CHAT_ONLY",
      finalReport: { content: "configured beside the binary" },
    });
    expect(run.exitCode).toBe(0);
    expect(server.requests).toHaveLength(1);
    expect(result.accounting[0]).toMatchObject({ type: "llm", provider: "local", model: "m" });

    const charter = (argv: readonly string[]) =>
      charterProcess(argv, { script: join(bin, "charter"), cwd: work, env: { HOME: root } });
    const listed = JSON.parse((await charter(["runs", "list", "--json"])).stdout) as { runId: string }[];
    expect(listed.map((stored) => stored.runId)).toEqual([result.runId]);
    const verified = JSON.parse((await charter(["verify", result.runId, "--json"])).stdout);
    expect(verified).toMatchObject({ ok: true, head_hash: result.transcript.headHash });
  });
});
