import type { AbilityLibrary } from "../abilities/ability.js";
import type { AgentSettings } from "../config/agent-settings-schema.js";
import type { LoadedConfiguration } from "../config/load-configuration.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { SecretRedactor } from "../foundation/secret-redactor.js";
import type { RunStore } from "../store/run-store.js";
import type { AgentCatalog } from "./agent-catalog.js";
import type { RunInvocation } from "./durable-run-hooks.js";
import type { ResumeRequest, RunAgentOptions } from "./run-agent-options.js";

/**
 * What one run tree shares: made once by `runAgentFile` for the top-level agent and handed unchanged to every
 * sub-agent it calls (`runLoadedAgent`), so that all of them read the same configuration, redact the same secrets
 * and write to the same tenant-scoped store.
 */
export interface RunContext {
  readonly options: RunAgentOptions;
  readonly catalog: AgentCatalog | null;
  readonly environment: RuntimeEnvironment;
  readonly cwd: string;
  readonly runsDirectory: string;
  readonly loaded: LoadedConfiguration;
  readonly overrides: AgentSettings;
  readonly redactor: SecretRedactor;
  readonly store: RunStore;
  readonly invocation: RunInvocation;
  readonly resume: ResumeRequest | null;
  /** The abilities folder's contents, read once per run tree and only when an agent names an ability. */
  readonly abilityLibrary: () => Promise<AbilityLibrary>;
}
