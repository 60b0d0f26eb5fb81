import type { RunStore } from "../store/run-store.js";

/**
 * The run store a command reads, chosen as `charter run` chooses it (selectRunStore): `--store`, else the
 * configuration's `store` (from `--config FILE` and the layers found from the working directory), else
 * `CHARTER_DATABASE_URL`, else `~/.charter/charter.db`; scoped to `--tenant` (none: the default tenant).
 */
export async function openCliStore(
  values: { store?: string; config?: string; tenant?: string },
  streams: { readonly binaryDirectory?: string },
): Promise<RunStore> {
  const { systemEnvironment } = await import("../foundation/environment.js");
  const { selectRunStore } = await import("../runner/select-run-store.js");
  const { openRunStore } = await import("../store/open-run-store.js");
  const location = await selectRunStore({
    store: values.store,
    ...(values.config !== undefined ? { configPath: values.config } : {}),
    // The configuration beside the `charter` command counts here as it does for `charter run`.
    ...(streams.binaryDirectory !== undefined ? { binaryDirectory: streams.binaryDirectory } : {}),
  });
  // Every query is scoped by the tenant: without --tenant, the runs stored without one.
  return openRunStore({ ...location, environment: systemEnvironment, tenantId: values.tenant ?? null });
}
