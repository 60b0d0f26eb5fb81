import type { FastifyRequest } from "fastify";
import type { RunStore } from "../../store/run-store.js";
import type { TenantScopeViolations } from "../identity/tenant-scope-violations.js";
import { refuseOutsideTenant } from "./refuse-outside-tenant.js";
import { runNotFound } from "./run-not-found.js";

/** The resource a violation names, by the kind of run the route serves. */
const resourceKinds = { run: "run", workflow: "workflow_run", "work-item": "work_item_run" } as const;

/**
 * What a run route does when the caller's tenant has no run `runId` (of the route's `kind`, absent for any run):
 * looks up which tenant has it (across tenants, the one unscoped read) and answers as refuseOutsideTenant does: a
 * recorded violation when another tenant has it, and the same RUN_NOT_FOUND either way.
 */
export async function refuseRunOutsideTenant(
  request: FastifyRequest,
  store: RunStore,
  violations: TenantScopeViolations,
  runId: string,
  kind?: "workflow" | "work-item",
): Promise<never> {
  const owner = await store.findRunTenant(runId);
  return refuseOutsideTenant(
    request,
    violations,
    owner?.tenantId,
    { kind: resourceKinds[kind ?? "run"], id: runId },
    runNotFound(runId, kind),
  );
}
