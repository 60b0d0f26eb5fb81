import { CharterError } from "../../foundation/charter-error.js";
import type { RunStore } from "../../store/run-store.js";
import type { TenantConfiguration } from "../tenants/tenant-configuration.js";

/**
 * Refuses an agent the tenant's configuration does not allow (`allowedAgents`), as `POST /v1/runs` does: `auto`
 * chooses among every agent of the server, so a tenant limited to some agents must name one of them.
 */
export async function checkAgentAllowed(tenantStore: RunStore, agent: string): Promise<void> {
  const tenant = (await tenantStore.getTenantConfiguration())?.configuration as
    | TenantConfiguration
    | undefined;
  const allowed = tenant?.allowedAgents ?? null;
  if (allowed === null || allowed.includes(agent)) return;
  throw new CharterError(
    "PERMISSION_DENIED",
    agent === "auto"
      ? `the tenant may run only its allowed agents (${allowed.join(", ") || "none"}): name one instead of auto`
      : `the tenant may not run the agent ${agent}`,
    { details: { reason: "agent_not_allowed", agent, allowedAgents: [...allowed] } },
  );
}
