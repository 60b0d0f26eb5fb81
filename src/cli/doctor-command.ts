import type { AgentCatalog } from "../runner/agent-catalog.js";
import type { SetupCheck } from "../runner/diagnose-agent-setup.js";
import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodeForError, exitCodes } from "./exit-code.js";
import { sharedFlags } from "./shared-flags.js";

const flags = {
  config: sharedFlags.config,
  json: { ...sharedFlags.json, description: "Print every check as one JSON document." },
} as const;

/** `charter doctor [agent-id|agent.md]`: what works and what does not, with the fix for each problem. */
export const doctorCommand = defineCommand({
  name: "doctor",
  summary:
    "Check configuration, agent, model targets, tool servers and endpoints, with a fix for each problem",
  description:
    "Loads the configuration layers and the agent file, resolves every model target, starts every tool server (then stops it), checks the agent's tools list against the tools they offer, and sends each model endpoint one tiny request. Prints one line per check (ok or FAIL, with the fix). Without an agent file, checks every configured provider model and tool server. Exit 0 only when every check passes; otherwise the exit code of the first failure (4 configuration, 3 tool server, 1 model endpoint). charter run --dry-run does the same for the agent it is given.",
  positionals: [
    {
      name: "agent-id|agent.md",
      optional: true,
      description: "The agent to check: a registry agent id or an agent file.",
    },
  ],
  flags,
  examples: ["charter doctor agent.md", "charter doctor --config ./ci.charter.json --json"],
  run: (positionals, values, streams) => runDoctor(positionals[0], values, streams),
});

/** Runs the checks and prints them; `charter run --dry-run` calls this too. */
export async function runDoctor(
  agentPath: string | undefined,
  values: FlagValues<typeof flags>,
  streams: CliStreams,
  agentCatalog?: AgentCatalog,
): Promise<number> {
  const { diagnoseAgentSetup } = await import("../runner/diagnose-agent-setup.js");
  const catalog = agentCatalog ?? (await import("../agents/create-agent-catalog.js")).createAgentCatalog();
  const checks = await diagnoseAgentSetup({
    agentCatalog: catalog,
    ...(agentPath !== undefined ? { agentPath } : {}),
    ...(values.config !== undefined ? { configPath: values.config } : {}),
    ...(streams.binaryDirectory !== undefined ? { binaryDirectory: streams.binaryDirectory } : {}),
  });
  const failed = checks.filter((check) => !check.ok);
  if (values.json) streams.stdout.write(`${JSON.stringify({ ok: failed.length === 0, checks })}\n`);
  else {
    for (const check of checks) streams.stdout.write(checkText(check));
    streams.stdout.write(
      failed.length === 0
        ? `all ${checks.length} checks passed\n`
        : `${failed.length} of ${checks.length} checks failed\n`,
    );
  }
  const first = failed[0];
  if (first === undefined) return exitCodes.success;
  return first.code === undefined ? exitCodes.sessionFailure : exitCodeForError(first.code);
}

function checkText(check: SetupCheck): string {
  if (check.ok) return `ok    ${check.check}: ${check.detail}\n`;
  return `FAIL  ${check.check}: ${check.code ?? "ERROR"}: ${check.detail}\n      fix: ${check.fix ?? "(none known)"}\n`;
}
