import { z } from "zod";
import { transcriptFormatVersion } from "../transcript/transcript-entry.js";
import { runKinds, runStatuses } from "./run-record.js";
import { storeError } from "./store-errors.js";

/** The export format's name and the version this Charter writes. */
export const runExportFormat = "charter.run-export";
export const runExportVersion = 1;

const nullableText = z.string().nullable();
const count = z.number().int().nonnegative();
const hash = z.string().regex(/^[0-9a-f]{64}$/);

const exportedRunSchema = z
  .object({
    run_id: z.string().min(1),
    contract_id: z.string(),
    contract_hash: hash,
    agent_id: z.string(),
    status: z.enum(runStatuses),
    status_reason: nullableText,
    outcome: nullableText,
    error_code: nullableText,
    created_at: z.number(),
    updated_at: z.number(),
    finished_at: z.number().nullable(),
    tenant_id: nullableText,
    correlation_id: nullableText,
    parent_run_id: nullableText,
    turns: count,
    tokens_in: count,
    tokens_out: count,
    cost_usd: z.number().nonnegative(),
    tools_used: z.array(z.string()),
    final_report: z.unknown(),
    head_hash: hash,
    entry_count: count,
    /** Present for a workflow run only (an agent run's export is as it always was): `workflow`. */
    kind: z.enum(runKinds).optional(),
  })
  .strict();

const runExportSchema = z
  .object({
    format: z.literal(runExportFormat),
    v: z.literal(runExportVersion),
    /** The store schema version of the Charter that wrote the export (informative). */
    schema_version: count,
    run: exportedRunSchema,
    header: z
      .object({
        v: z.literal(transcriptFormatVersion),
        run_id: z.string(),
        contract_hash: z.string(),
        adapter_version: z.string(),
        model_profile_id: z.string(),
        genesis_hash: z.string(),
        created_at: z.string(),
      })
      .strict(),
    contract: z.record(z.string(), z.unknown()),
    /** The transcript's exact lines, in seq order, without newlines. */
    entries: z.array(z.string()),
    raw_payloads: z.array(z.object({ hash, json: z.string() }).strict()),
    checkpoints: z.array(
      z
        .object({
          seq: count,
          turn: z.number().int(),
          created_at: z.number(),
          checkpoint: z.looseObject({ v: z.number().int().positive() }),
        })
        .strict(),
    ),
    /** Accounting entries in order (their position is their index). */
    accounting: z.array(z.looseObject({ type: z.string(), turn: z.number(), timestamp: z.number() })),
    /** Tool results in commit order (their position is their index). */
    tool_results: z.array(
      z
        .object({
          turn: z.number().int(),
          call_id: z.string(),
          tool_name: z.string(),
          server: nullableText,
          request_hash: z.string(),
          status: z.string(),
          error_code: nullableText,
          created_at: z.number(),
          result: z.unknown(),
        })
        .strict(),
    ),
    tool_outputs: z.array(
      z
        .object({
          handle: z.string(),
          tool_name: z.string(),
          call_id: z.string(),
          bytes: count,
          lines: count,
          path: z.string(),
          created_at: z.number(),
        })
        .strict(),
    ),
  })
  .strict();

/** A stored run in the export format of version `runExportVersion` (see docs/store.md). */
export type RunExport = z.infer<typeof runExportSchema>;

/**
 * Upgrades from each older export version to the next, by version. Empty while version 1 is the only one;
 * a new version adds the step from the previous one here, so that exports written by older Charters load.
 */
const upgrades: Readonly<Record<number, (value: Record<string, unknown>) => Record<string, unknown>>> = {};

/**
 * Reads an export of any supported version: upgrades it step by step to the current version, then validates
 * it. Throws ARGUMENT_INVALID (`export_invalid`) for anything else, CONFIGURATION_INVALID (`schema_newer`)
 * for an export written by a newer Charter.
 */
export function parseRunExport(value: unknown): RunExport {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw storeError("export_invalid", "a run export must be a JSON object");
  }
  let document = value as Record<string, unknown>;
  if (document.format !== runExportFormat) {
    throw storeError("export_invalid", `a run export has format ${JSON.stringify(runExportFormat)}`, {
      format: document.format ?? null,
    });
  }
  const version = document.v;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 1) {
    throw storeError("export_invalid", "the run export has no valid version v", { version: version ?? null });
  }
  if (version > runExportVersion) {
    throw storeError(
      "schema_newer",
      `the run export has version ${version}; this Charter reads up to ${runExportVersion}`,
      { version, supported: runExportVersion },
    );
  }
  for (let from = version; from < runExportVersion; from++) {
    const upgrade = upgrades[from];
    if (upgrade === undefined) {
      throw storeError("export_invalid", `no upgrade from run export version ${from}`, { version: from });
    }
    document = { ...upgrade(document), v: from + 1 };
  }
  const parsed = runExportSchema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw storeError("export_invalid", "the run export does not match its format", {
      path: issue?.path.map(String).join(".") ?? "",
      issue: issue?.message ?? null,
    });
  }
  return parsed.data;
}
