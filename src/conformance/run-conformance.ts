import { homedir } from "node:os";
import { resolve } from "node:path";
import { loadConfiguration } from "../config/load-configuration.js";
import { resolveModelTargets } from "../config/resolve-model-targets.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import { SecretRedactor } from "../foundation/secret-redactor.js";
import { createModelClient } from "../model/providers/create-model-client.js";
import type { ConformanceCaseName } from "./conformance-case.js";
import {
  type ConformanceCaseRun,
  type ConformanceReport,
  runConformanceCorpus,
} from "./run-conformance-corpus.js";

export interface RunConformanceOptions {
  /** `provider/model`, resolved against the configuration's providers. */
  readonly model: string;
  /** `--config FILE`; the other configuration layers apply as for `charter run`. */
  readonly configPath?: string;
  readonly repeat?: number;
  readonly cwd?: string;
  readonly homeDirectory?: string;
  readonly etcDirectory?: string;
  readonly binaryDirectory?: string;
  readonly processEnvironment?: Readonly<Record<string, string | undefined>>;
  readonly environment?: RuntimeEnvironment;
  readonly toolTimeoutMs?: number;
  readonly toolOutputDirectory?: string;
  readonly cases?: readonly ConformanceCaseName[];
  readonly signal?: AbortSignal;
  readonly onRun?: (run: ConformanceCaseRun) => void;
}

/**
 * `charter conformance`: loads the layered configuration, reaches `provider/model` through its configured provider
 * (secrets from `.charter.env` and `${VAR}` registered with the redactor) and runs the conformance corpus against
 * it. Throws CONFIGURATION_INVALID for a model the configuration does not define.
 */
export async function runConformance(options: RunConformanceOptions): Promise<ConformanceReport> {
  const environment = options.environment ?? systemEnvironment;
  const cwd = options.cwd ?? process.cwd();
  const loaded = await loadConfiguration({
    ...(options.configPath !== undefined ? { configPath: resolve(cwd, options.configPath) } : {}),
    cwd,
    promptDirectory: cwd,
    homeDirectory: options.homeDirectory ?? homedir(),
    ...(options.etcDirectory !== undefined ? { etcDirectory: options.etcDirectory } : {}),
    ...(options.binaryDirectory !== undefined ? { binaryDirectory: options.binaryDirectory } : {}),
    ...(options.processEnvironment !== undefined ? { processEnvironment: options.processEnvironment } : {}),
  });
  const redactor = new SecretRedactor();
  for (const secret of loaded.secrets) redactor.addSecret(secret.value, secret.label);
  const [target] = resolveModelTargets([options.model], loaded.configuration);
  const model = createModelClient(target!, { environment });
  return runConformanceCorpus({
    target: target!,
    model,
    configurationDefaults: loaded.configuration.defaults,
    environment,
    redactor,
    ...(options.repeat !== undefined ? { repeat: options.repeat } : {}),
    ...(options.toolTimeoutMs !== undefined ? { toolTimeoutMs: options.toolTimeoutMs } : {}),
    ...(options.toolOutputDirectory !== undefined
      ? { toolOutputDirectory: options.toolOutputDirectory }
      : {}),
    ...(options.cases !== undefined ? { cases: options.cases } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
    ...(options.onRun !== undefined ? { onRun: options.onRun } : {}),
  });
}
