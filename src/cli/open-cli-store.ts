import { systemEnvironment } from "../foundation/environment.js";
import { openRunStore } from "../store/open-run-store.js";
import type { RunStore } from "../store/run-store.js";
import { storeLocationFromFlag } from "../store/run-store-location.js";

/** The run store a command reads: `--store`, else `CHARTER_DATABASE_URL`, else `~/.charter/charter.db`. */
export function openCliStore(flag: string | undefined): Promise<RunStore> {
  return openRunStore({ ...storeLocationFromFlag(flag), environment: systemEnvironment });
}
