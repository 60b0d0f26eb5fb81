import { systemEnvironment } from "../foundation/environment.js";
import { openRunStore } from "../store/open-run-store.js";
import type { RunStore } from "../store/run-store.js";

/** The run store a command reads: `--store`, else `CHARTER_DATABASE_URL`, else `~/.charter/charter.db`. */
export function openCliStore(flag: string | undefined): Promise<RunStore> {
  const location =
    flag === undefined
      ? {}
      : flag.includes("://") || flag.startsWith("sqlite:")
        ? { url: flag }
        : { path: flag };
  return openRunStore({ ...location, environment: systemEnvironment });
}
