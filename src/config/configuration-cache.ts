import { type BigIntStats, statSync } from "node:fs";
import {
  configurationFilesRead,
  type LoadConfigurationOptions,
  type LoadedConfiguration,
  loadConfiguration,
} from "./load-configuration.js";

/**
 * `loadConfiguration` for a process that loads the same configuration over and over (a server loads it twice per
 * run): the result is kept and given again while nothing it was made from changed.
 */
export interface ConfigurationCache {
  load(options: LoadConfigurationOptions): Promise<LoadedConfiguration>;
}

export interface ConfigurationCacheOptions {
  /** How many different configurations are kept (per tenant overlay and agent directory); default 256. */
  readonly limit?: number;
  /**
   * The real clock, in milliseconds since the epoch, compared with file times (never the run's injected clock: file
   * times are the system's); default `Date.now`.
   */
  readonly now?: () => number;
}

/**
 * A file changed this recently is read again at every load: file times are kept in coarse ticks (milliseconds), so
 * a second edit within the same tick as the one read, to the same size, would look unchanged.
 */
export const settledFileMilliseconds = 2000;

/** What one file looked like when it was read: absent, or its identity, size and times. */
interface FileState {
  readonly text: string;
  /** The later of its modification and change times, in milliseconds; null when absent. */
  readonly changedAt: number | null;
}

interface CachedConfiguration {
  readonly loaded: LoadedConfiguration;
  readonly files: readonly { readonly path: string; readonly state: string }[];
  /** The process environment's variables the placeholders took, with the value each had. */
  readonly variables: ReadonlyMap<string, string | undefined>;
}

/**
 * The same answer as `loadConfiguration`, read from the files only when one changed: a kept configuration is given
 * again when every file it could have read (each layer and the `.charter.env` beside it, present or not) has the
 * same identity, size, modification and change times as before it was read, and every process environment variable
 * its placeholders took still has the value it had. Files are looked at before they are read, so an edit made while
 * they are read is seen at the next load; a configuration with a file changed in the last `settledFileMilliseconds`
 * is not kept (see there). A load that fails is not kept either (the next one reads the files again).
 */
export function createConfigurationCache(options: ConfigurationCacheOptions = {}): ConfigurationCache {
  const limit = Math.max(1, Math.trunc(options.limit ?? 256));
  const now = options.now ?? Date.now;
  const kept = new Map<string, CachedConfiguration>();

  function stillCurrent(entry: CachedConfiguration, environment: EnvironmentVariables): boolean {
    for (const [name, value] of entry.variables) if (environment[name] !== value) return false;
    return entry.files.every((file) => fileState(file.path).text === file.state);
  }

  return {
    async load(loadOptions) {
      const paths = configurationFilesRead(loadOptions);
      const environment = loadOptions.processEnvironment ?? process.env;
      // A lookup key, never stored nor hashed: the same overlay built the same way gives the same text.
      const key = JSON.stringify({ paths, overlay: loadOptions.overlay ?? null });
      const found = kept.get(key);
      if (found !== undefined && stillCurrent(found, environment)) return found.loaded;
      const states = paths.map(fileState);
      const variables = new Map<string, string | undefined>();
      // Records each variable a placeholder looks up (and what it found), so a changed value is noticed.
      const recording = new Proxy(environment, {
        get(target, name) {
          const value = Reflect.get(target, name) as string | undefined;
          if (typeof name === "string") variables.set(name, value);
          return value;
        },
      });
      const loaded = await loadConfiguration({ ...loadOptions, processEnvironment: recording });
      kept.delete(key);
      const settledBefore = now() - settledFileMilliseconds;
      if (states.some((state) => state.changedAt !== null && state.changedAt >= settledBefore)) return loaded;
      if (kept.size >= limit) kept.delete(kept.keys().next().value as string);
      kept.set(key, {
        loaded,
        files: paths.map((path, index) => ({ path, state: (states[index] as FileState).text })),
        variables,
      });
      return loaded;
    },
  };
}

type EnvironmentVariables = Readonly<Record<string, string | undefined>>;

/**
 * Synchronous on purpose: a stat of a local file is a few microseconds of system call, while an asynchronous one
 * costs a thread-pool round trip and a promise (profiled at ~70 µs of the event loop's time each under load), and a
 * server's run makes about twenty.
 */
function fileState(path: string): FileState {
  let stats: BigIntStats | undefined;
  try {
    stats = statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    // Unreadable: loading it fails, and a failed load is not kept.
    return { text: `unreadable:${(error as NodeJS.ErrnoException).code ?? "unknown"}`, changedAt: null };
  }
  if (stats === undefined) return { text: "missing", changedAt: null };
  return {
    text: `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`,
    changedAt: Number((stats.mtimeNs > stats.ctimeNs ? stats.mtimeNs : stats.ctimeNs) / 1_000_000n),
  };
}
