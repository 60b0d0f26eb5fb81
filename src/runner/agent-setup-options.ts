import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { AgentCatalog } from "./agent-catalog.js";

/** Where `charter tools` and `charter doctor` find the agent and configuration: as `charter run` finds them. */
export interface AgentSetupOptions {
  /** The agent file, or a registry id; without it, every configured MCP server and REST tool is inspected. */
  readonly agentPath?: string;
  /** Resolves `agentPath` when it is a registry id. */
  readonly agentCatalog?: AgentCatalog;
  /** `--config FILE`. */
  readonly configPath?: string;
  readonly cwd?: string;
  readonly homeDirectory?: string;
  readonly etcDirectory?: string;
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  readonly environment?: RuntimeEnvironment;
}
