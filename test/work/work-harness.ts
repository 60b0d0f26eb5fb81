import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startScriptedOpenAIServer } from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import type { WorkRunResult } from "../../src/work/work-run-result.js";
import { agentFile, cli, localModelProvider } from "../cli/cli-harness.js";

export function call(name: string, args: Record<string, unknown>): ScriptedStep {
  return { kind: "tool_calls", calls: [{ name, arguments: args }] };
}

export function calls(...list: [string, Record<string, unknown>][]): ScriptedStep {
  return { kind: "tool_calls", calls: list.map(([name, args]) => ({ name, arguments: args })) };
}

export function report(content: string): ScriptedStep {
  return call("final_report", { format: "markdown", content });
}

/**
 * A folder outside the repository with the agent (`agent.md`, the scripted server as its model), its
 * `.charter.json`, and a work item file written from `item`; `run` runs `charter work run` on it in process.
 */
export async function workSetup(script: readonly ScriptedStep[], item: Record<string, unknown>) {
  const server = await startScriptedOpenAIServer({ script });
  const directory = await mkdtemp(join(tmpdir(), "charter-work-agent-"));
  await writeFile(join(directory, "agent.md"), agentFile("models: [local/m]\nmaxTurns: 20"));
  await writeFile(
    join(directory, ".charter.json"),
    JSON.stringify({ providers: localModelProvider(server.baseUrl) }),
  );
  const itemPath = join(directory, "item.json");
  await writeFile(itemPath, JSON.stringify({ agent_id: "agent.md", description: "Do the work.", ...item }));
  const runsDirectory = join(directory, "runs");
  async function run(repository: string, extra: readonly string[] = []) {
    const output = await cli([
      "work",
      "run",
      itemPath,
      "--repo",
      repository,
      "--json",
      "--runs-dir",
      runsDirectory,
      ...extra,
    ]);
    const result = output.stdout === "" ? null : (JSON.parse(output.stdout) as WorkRunResult);
    return { ...output, result };
  }
  return { server, directory, itemPath, runsDirectory, run };
}
