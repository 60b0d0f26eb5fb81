import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ExecutionContract } from "../contract/execution-contract.js";
import { runAgent } from "../runner/run-agent.js";
import type { AIAgentResult } from "../session/agent-result.js";
import type { SessionState } from "../session/session-state.js";
import type { TransitionOutput } from "../session/transition-output.js";
import { startScriptedOpenAIServer } from "../testing/scripted-openai-server.js";
import type { VerificationReport } from "../transcript/verification-report.js";
import { verifyRunDirectory } from "../transcript/verify-transcript.js";
import { demoAnalyst } from "./demo-analyst.js";

export const demoPrompt = "Which keyboards do you sell, what do they cost, and are they in stock?";

/** The bundled example agent; the README shows how to run it against a real endpoint. */
export const demoAgentPath = fileURLToPath(new URL("../../examples/demo-agent.md", import.meta.url));

/**
 * `charter demo`: a real multi-turn run on loopback. A scripted OpenAI-compatible server (real HTTP) plays
 * the model, the bundled catalogue MCP server (a real stdio child process) provides the tools, and the run
 * goes through the same runner as `charter run`, then its transcript is verified.
 */
export async function runDemo(options: {
  readonly runsDirectory?: string;
  readonly prompt?: string;
  readonly signal?: AbortSignal;
  readonly onTransition?: (
    state: SessionState,
    output: TransitionOutput,
    contract: ExecutionContract,
  ) => void;
}): Promise<{ result: AIAgentResult; verification: VerificationReport | null }> {
  const server = await startScriptedOpenAIServer({ respond: (request) => demoAnalyst(request) });
  const workDirectory = await mkdtemp(join(tmpdir(), "charter-demo-"));
  try {
    // The catalogue server runs as compiled JavaScript, or as TypeScript source under the test runner.
    const serverScript = fileURLToPath(
      new URL(`./demo-mcp-server${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url),
    );
    const configPath = join(workDirectory, "demo.charter.json");
    await writeFile(
      configPath,
      JSON.stringify({
        providers: {
          demo: {
            type: "openai-compatible",
            baseUrl: server.baseUrl,
            models: { "scripted-analyst": { contextWindow: 32768 } },
          },
        },
        mcpServers: { catalog: { type: "stdio", command: process.execPath, args: [serverScript] } },
      }),
    );
    const result = await runAgent({
      agentPath: demoAgentPath,
      prompt: options.prompt ?? demoPrompt,
      configPath,
      cwd: workDirectory,
      ...(options.runsDirectory !== undefined ? { runsDirectory: options.runsDirectory } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(options.onTransition !== undefined ? { onTransition: options.onTransition } : {}),
    });
    const verification =
      result.transcript.directory === null ? null : await verifyRunDirectory(result.transcript.directory);
    return { result, verification };
  } finally {
    await server.close();
    await rm(workDirectory, { recursive: true, force: true });
  }
}
