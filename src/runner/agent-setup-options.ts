import type { RuntimeEnvironment } from "../foundation/environment.js";

/** Where `charter tools` and `charter doctor` find the agent and configuration: as `charter run` finds them. */
export interface AgentSetupOptions {
  /** The agent file; without it, every configured MCP server and REST tool is inspected. */
  readonly agentPath?: string;
  /** `--config FILE`. */
  readonly configPath?: string;
  readonly cwd?: string;
  readonly homeDirectory?: string;
  readonly etcDirectory?: string;
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  readonly environment?: RuntimeEnvironment;
}
