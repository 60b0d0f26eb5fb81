import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import type { RunRecord } from "../../store/run-record.js";
import type { RunStore } from "../../store/run-store.js";
import { verifyStoredRun } from "../../store/verify-stored-run.js";
import type { TenantScopeViolations } from "../identity/tenant-scope-violations.js";
import { runTimeline } from "../inspection/run-timeline.js";
import { authenticatedErrors, errorReference } from "./error-schema.js";
import { refuseRunOutsideTenant } from "./refuse-run-outside-tenant.js";
import { identityOf } from "./request-identity.js";
import { runIdParams } from "./run-id-params.js";

export interface RunInspectionRoutesOptions {
  readonly store: RunStore;
  readonly violations: TenantScopeViolations;
}

const verificationSchema = {
  type: "object",
  required: ["runId", "ok", "entries", "headHash", "firstBadEntry"],
  properties: {
    runId: { type: "string" },
    ok: { type: "boolean" },
    entries: {
      type: "integer",
      description: "Entries verified: all of them when ok, else those before the fault.",
    },
    headHash: { type: ["string", "null"] },
    firstBadEntry: {
      type: ["object", "null"],
      required: ["seq", "stepId", "reason", "detail"],
      properties: {
        seq: {
          type: ["integer", "null"],
          description: "The entry at fault (null: the header, contract or a payload).",
        },
        stepId: { type: ["string", "null"] },
        reason: { type: "string", description: "CHAIN_LINK_MISMATCH, RESULT_HASH_MISMATCH, SEQUENCE_GAP..." },
        detail: { type: "string" },
        record: { type: ["string", "null"] },
      },
    },
  },
} as const;

const timelineCall = { type: "object", additionalProperties: true } as const;

const timelineSchema = {
  type: "object",
  required: ["runId", "turns"],
  properties: {
    runId: { type: "string" },
    turns: {
      type: "array",
      items: {
        type: "object",
        required: ["turn", "modelCalls", "toolCalls"],
        properties: {
          turn: { type: "integer" },
          modelCalls: { type: "array", items: timelineCall },
          toolCalls: { type: "array", items: timelineCall },
        },
      },
    },
  },
} as const;

/**
 * What the run viewer reads besides the run itself: the transcript's verification recomputed now, the run's
 * contract, and its timeline (model and tool calls, turn by turn). Any role may read them, in its own tenant only;
 * a run of another tenant is the same 404 as one that does not exist, and a recorded violation.
 */
export const runInspectionRoutes: FastifyPluginAsync<RunInspectionRoutesOptions> = async (app, options) => {
  const { store, violations } = options;

  async function ownRun(request: FastifyRequest<{ Params: { id: string } }>): Promise<RunRecord> {
    const runId = request.params.id;
    const run = await store.forTenant(identityOf(request).tenantId).getRun(runId);
    if (run !== null) return run;
    return refuseRunOutsideTenant(request, store, violations, runId);
  }

  app.get<{ Params: { id: string } }>(
    "/v1/runs/:id/verification",
    {
      config: { permission: "runs.read" },
      schema: {
        summary: "Verify the run's stored transcript now: its hash chain, payloads and the records it binds",
        tags: ["runs"],
        params: runIdParams,
        response: { 200: verificationSchema, 404: errorReference, ...authenticatedErrors },
      },
    },
    async (request) => {
      const run = await ownRun(request);
      const report = await verifyStoredRun(store.forTenant(identityOf(request).tenantId), run.runId);
      const bad = report.first_bad_entry;
      return {
        runId: run.runId,
        ok: report.ok,
        entries: report.entries,
        headHash: report.head_hash,
        firstBadEntry:
          bad === null
            ? null
            : {
                seq: bad.seq,
                stepId: bad.step_id,
                reason: bad.reason_code,
                detail: bad.detail,
                record: bad.record ?? null,
              },
      };
    },
  );

  app.get<{ Params: { id: string } }>(
    "/v1/runs/:id/contract",
    {
      config: { permission: "runs.read" },
      schema: {
        summary: "The contract the run is bound to: its hash and the contract itself (limits, tools, policy)",
        tags: ["runs"],
        params: runIdParams,
        response: {
          200: {
            type: "object",
            required: ["runId", "contractHash", "contract"],
            properties: {
              runId: { type: "string" },
              contractHash: { type: "string" },
              contract: { type: "object", additionalProperties: true },
            },
          },
          404: errorReference,
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const run = await ownRun(request);
      return { runId: run.runId, contractHash: run.contractHash, contract: run.contract };
    },
  );

  app.get<{ Params: { id: string } }>(
    "/v1/runs/:id/timeline",
    {
      config: { permission: "runs.read" },
      schema: {
        summary:
          "The run's model and tool calls, turn by turn, with latency, tokens, cost, retries and failovers",
        tags: ["runs"],
        params: runIdParams,
        response: { 200: timelineSchema, 404: errorReference, ...authenticatedErrors },
      },
    },
    async (request) => {
      const run = await ownRun(request);
      return runTimeline(store.forTenant(identityOf(request).tenantId), run.runId);
    },
  );
};
