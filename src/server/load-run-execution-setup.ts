import { resolve } from "node:path";
import { createAgentCatalog } from "../agents/create-agent-catalog.js";
import { type LoadedConfiguration, loadConfiguration } from "../config/load-configuration.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import { SecretRedactor } from "../foundation/secret-redactor.js";
import { selectRunStore } from "../runner/select-run-store.js";
import type { RunStore } from "../store/run-store.js";
import type { RunExecutionContext } from "./execution/run-execution-context.js";
import { openRunTelemetryExporter } from "./telemetry/open-run-telemetry-exporter.js";
import type { RunTelemetryExporter } from "./telemetry/run-telemetry-exporter.js";
import {
  createProviderKeySourceResolver,
  createTenantConfigurationResolver,
} from "./tenants/resolve-tenant-settings.js";
import { loadTenantSecretsKey } from "./tenants/tenant-secrets-key.js";

/** What `charter serve` and `charter worker` are given to find their configuration and store. */
export interface RunExecutionSetupOptions {
  /** `--config FILE`, layered over the configuration files found from `cwd`. */
  readonly configPath?: string;
  /** `--store URL`: wins over the configuration's store. */
  readonly store?: string;
  readonly cwd?: string;
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  readonly environment?: RuntimeEnvironment;
  /** Told of a failure in the background (a telemetry export the collector refused), as one line. */
  readonly onError?: (error: unknown) => void;
}

export interface RunExecutionSetup {
  readonly loaded: LoadedConfiguration;
  /** The run store's URL, chosen by the same rule as `charter run`'s. */
  readonly storeUrl: string;
  readonly environment: RuntimeEnvironment;
  /**
   * Where the runs' traces and metrics go when `OTEL_EXPORTER_OTLP_ENDPOINT` (or a signal's own endpoint) is set,
   * else null. The process shuts it down (which flushes it) once its runs have drained.
   */
  readonly telemetry: RunTelemetryExporter | null;
  /** The key tenants' provider keys are sealed with in the store (`loadTenantSecretsKey`), or null for none. */
  readonly secretsKey: Uint8Array | null;
  /** Builds what executing runs needs once the store is open: the same layers the configuration was read from. */
  executionContext(store: RunStore): RunExecutionContext;
}

/**
 * Loads the configuration as `charter run` does and chooses the run store, for both processes that execute a
 * server's runs: so a run reads the same configuration layers, tenant settings, tool-call limits and secrets
 * whichever of them executes it.
 */
export async function loadRunExecutionSetup(options: RunExecutionSetupOptions): Promise<RunExecutionSetup> {
  const environment = options.environment ?? systemEnvironment;
  const cwd = options.cwd ?? process.cwd();
  const configPath = options.configPath !== undefined ? resolve(cwd, options.configPath) : undefined;
  const fromProcess =
    options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {};
  const layers = {
    cwd,
    ...(configPath !== undefined ? { configPath } : {}),
    ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
    ...fromProcess,
  };
  const loaded = await loadConfiguration(layers);
  const { url } = await selectRunStore({
    store: options.store,
    configured: loaded.configuration.store,
    ...fromProcess,
  });
  const serverRedactor = () => {
    const redactor = new SecretRedactor();
    for (const secret of loaded.secrets) redactor.addSecret(secret.value, secret.label);
    return redactor;
  };
  const telemetry = await openRunTelemetryExporter(
    options.processEnvironment ?? process.env,
    serverRedactor(),
    options.onError,
  );
  const secretsKey = await loadTenantSecretsKey({ storeUrl: url, ...fromProcess });
  return {
    loaded,
    storeUrl: url,
    environment,
    telemetry,
    secretsKey,
    executionContext(store) {
      const redactor = serverRedactor();
      const toolCallLimits = loaded.configuration.server?.rateLimits?.toolCalls;
      const { workflows, repositories } = loaded.configuration.server ?? {};
      const toolCacheDefaultTtl = loaded.configuration.server?.toolCache?.defaultTtl;
      const budgets = loaded.configuration.server?.budgets;
      return {
        ...layers,
        store,
        agentCatalog: createAgentCatalog(),
        environment,
        ...(toolCallLimits !== undefined ? { toolCallLimits } : {}),
        storeUrl: url,
        ...(workflows !== undefined ? { workflowsDirectory: resolve(cwd, workflows) } : {}),
        ...(repositories !== undefined ? { repositories } : {}),
        ...(toolCacheDefaultTtl !== undefined ? { toolCacheDefaultTtl } : {}),
        ...(budgets !== undefined ? { budgets } : {}),
        // Each tenant's configuration (provider keys, models) applies wherever its runs execute.
        tenantConfiguration: createTenantConfigurationResolver({
          store,
          configuration: loaded.configuration,
          secretsKey,
          ...fromProcess,
        }),
        providerKeySources: createProviderKeySourceResolver({
          store,
          configuration: loaded.configuration,
          secretsKey,
          ...fromProcess,
        }),
        redactor,
        ...(telemetry !== null ? { telemetry } : {}),
      };
    },
  };
}
