import type { Configuration } from "../config/configuration-schema.js";
import type { ConfigurationOverlay } from "../config/load-configuration.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { SecretRedactor } from "../foundation/secret-redactor.js";
import type { AgentCatalog } from "../runner/agent-catalog.js";
import type { ModelCallBudget } from "../runner/model-call-budget.js";
import type { RunToolPermissions } from "../runner/tool-permissions.js";

/** What every step of one workflow run shares: where it was started, its configuration, store and owner. */
export interface WorkflowRunContext {
  readonly workflowRunId: string;
  /** The workflow file's directory: step agent paths are relative to it. */
  readonly workflowDirectory: string;
  /** The run store as one URL, handed to each step's run so that all of them are stored together. */
  readonly storeUrl: string;
  readonly configuration: Configuration;
  readonly configPath: string | null;
  readonly cwd: string;
  readonly runsDirectory?: string;
  readonly homeDirectory?: string;
  readonly etcDirectory?: string;
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  readonly tenantId: string | null;
  readonly correlationId: string | null;
  readonly environment: RuntimeEnvironment;
  readonly redactor: SecretRedactor;
  /** The agent registry steps' registry ids are resolved in; default the configuration's (read once per run). */
  readonly agentCatalog?: AgentCatalog;
  /** A configuration layer over every other for each step's run (a server's tenant's providers and models). */
  readonly configurationOverlay?: ConfigurationOverlay;
  /** What every agent step may do with tools (a server's caller's role); default the configuration's approvals. */
  readonly toolPermissions?: RunToolPermissions;
  /** Asked before every model call of every agent step (a server's tenant budgets). */
  readonly modelCallBudget?: ModelCallBudget;
  /**
   * A person's decisions on the calls continued steps' runs wait on, by step run id: the run continues with them
   * (an approved call runs once, a denied one is a tool failure its model sees). Never from a model.
   */
  readonly stepDecisions?: Readonly<Record<string, StepRunDecisions>>;
}

/** The decisions on one step run's pending calls (`charter resume --approve/--deny`). */
export interface StepRunDecisions {
  readonly approve: readonly string[];
  readonly deny: readonly string[];
}
