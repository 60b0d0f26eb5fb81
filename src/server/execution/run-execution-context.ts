import type { ConfigurationCache } from "../../config/configuration-cache.js";
import type { ConfigurationOverlay } from "../../config/load-configuration.js";
import type { BudgetsConfiguration } from "../../config/server-configuration-schema.js";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { SecretRedactor } from "../../foundation/secret-redactor.js";
import type { AgentCatalog } from "../../runner/agent-catalog.js";
import type { ToolPermissionClass } from "../../runner/tool-permissions.js";
import type { RunStore } from "../../store/run-store.js";
import type { ToolCallLimits } from "../limits/tool-call-rate-limiter.js";
import type { RunTelemetryExporter } from "../telemetry/run-telemetry-exporter.js";
import type { ProviderKeySource } from "../tenants/resolve-tenant-settings.js";
import type { RunEventHub } from "./run-event-hub.js";
import type { ServerRole } from "./run-request.js";

/**
 * A tenant's provider and model overrides (and provider keys), as a configuration layer above the server's own;
 * null when the tenant has none. Called for every run and every continuation of one (the overlay is never stored).
 */
export type TenantConfigurationResolver = (tenantId: string) => Promise<ConfigurationOverlay | null>;

/** What executing a server's runs needs beside the request: where runs live and what they run under. */
export interface RunExecutionContext {
  /** The server's run store (any tenant's view): each run uses `store.forTenant(request.tenantId)`. */
  readonly store: RunStore;
  /** Resolves agent ids and `auto` (the project's agent registry). */
  readonly agentCatalog: AgentCatalog;
  readonly environment: RuntimeEnvironment;
  /** The server's working directory, where configuration layers and `./agents` are found. */
  readonly cwd: string;
  /** `--config FILE`: the server's configuration file over the usual layers. */
  readonly configPath?: string;
  readonly homeDirectory?: string;
  readonly etcDirectory?: string;
  /** The directory of the `charter` command (configuration layer 4). */
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  /** Where run directories go; default `~/.charter/runs`. */
  readonly runsDirectory?: string;
  /**
   * Loads each run's configuration, reading the files again only when one changed; default one
   * `createConfigurationCache()` per context.
   */
  readonly configurationCache?: ConfigurationCache;
  /** Per-tenant configuration overrides; default none. */
  readonly tenantConfiguration?: TenantConfigurationResolver;
  /**
   * Which layer supplies each provider's key for a tenant's runs (recorded on ROUTED as `provider_key_sources`, the
   * keys never); default: not recorded.
   */
  readonly providerKeySources?: (
    tenantId: string,
  ) => Promise<Readonly<Record<string, ProviderKeySource | null>>>;
  /** The tool classes each role's runs may call; default `defaultRoleToolClasses`. */
  readonly roleToolClasses?: (role: ServerRole) => readonly ToolPermissionClass[];
  /** `server.rateLimits.toolCalls`: the tool calls a tenant's and a user's runs may make a minute; default none. */
  readonly toolCallLimits?: ToolCallLimits;
  /**
   * The run store's URL: workflow and work item runs open their own connection to it (as `charter workflow run`
   * and `charter work run` do); without it they fail.
   */
  readonly storeUrl?: string;
  /** `server.workflows`: the folder of the workflows the API may start by name. */
  readonly workflowsDirectory?: string;
  /** `server.repositories`: the git working trees work items may change, by name. */
  readonly repositories?: Readonly<Record<string, string>>;
  /**
   * `server.toolCache.defaultTtl`: how long (ms) a read-only tool's result is served to the runs of the same tenant
   * and role, for every tool the configuration's `toolCache` gives no TTL of its own; null caches only those it
   * names. Default 90 s.
   */
  readonly toolCacheDefaultTtl?: number | null;
  /** `server.budgets`: each tenant's token and cost budgets unless its configuration sets its own; default none. */
  readonly budgets?: BudgetsConfiguration;
  /** Told of every lifecycle event once it is stored (live event streams in this process). */
  readonly events?: RunEventHub;
  /**
   * The server configuration's secrets, applied to what is stored before a run's own redactor exists (the request
   * as accepted). Each run's events pass the run's redactor as well.
   */
  readonly redactor?: SecretRedactor;
  /** Where each execution's traces and metrics go (OTLP), when the process exports telemetry; default none. */
  readonly telemetry?: RunTelemetryExporter;
}
