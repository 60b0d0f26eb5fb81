import type { Configuration } from "../config/configuration-schema.js";
import { type LoadConfigurationOptions, loadConfiguration } from "../config/load-configuration.js";
import {
  type RunStoreLocation,
  resolveRunStoreLocation,
  storeLocationFromFlag,
} from "../store/run-store-location.js";

/** The configuration layers to load (when needed), plus `--store` or a configuration the caller loaded already. */
export interface SelectRunStoreOptions extends LoadConfigurationOptions {
  /** `--store` (the library's `store` option): a URL or a SQLite file path. Wins over everything else. */
  readonly store?: string | undefined;
  /** The merged configuration's `store` section, when the caller loaded the configuration already. */
  readonly configured?: Configuration["store"];
}

/**
 * The one rule by which every command (`run`, `resume`, `runs`, `verify`, `replay`) and the library pick the run
 * store, first match wins: `--store`, the configuration's `store.url` then `store.path`, `CHARTER_DATABASE_URL`,
 * then `~/.charter/charter.db`. The configuration layers are loaded only when no `--store` is given and the
 * caller has not loaded them, so `--store` works even where the configuration does not load.
 *
 * Returns the store as one URL (`postgres://...` or `sqlite://<absolute path>`) so that a command can hand
 * exactly the store it opened to the next one (resume continues a run in the store it found it in).
 */
export async function selectRunStore(options: SelectRunStoreOptions): Promise<{ readonly url: string }> {
  const home = options.homeDirectory !== undefined ? { homeDirectory: options.homeDirectory } : {};
  const variables = options.processEnvironment !== undefined ? { variables: options.processEnvironment } : {};
  if (options.store !== undefined) {
    return storeUrl(
      resolveRunStoreLocation({ ...storeLocationFromFlag(options.store), ...home, ...variables }),
    );
  }
  const { store: _store, configured: loaded, ...layers } = options;
  const configured = loaded ?? (await loadConfiguration(layers)).configuration.store;
  return storeUrl(
    resolveRunStoreLocation({
      ...(configured.url !== undefined ? { url: configured.url } : {}),
      ...(configured.path !== undefined ? { path: configured.path } : {}),
      ...home,
      ...variables,
    }),
  );
}

function storeUrl(location: RunStoreLocation): { readonly url: string } {
  // `sqlite://` + an absolute path (or `:memory:`) reads back as that same path whatever it contains.
  return { url: location.backend === "sqlite" ? `sqlite://${location.path}` : location.url };
}
