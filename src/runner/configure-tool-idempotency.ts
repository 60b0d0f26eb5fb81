import type { ToolManifestEntry } from "../contract/execution-contract.js";
import { deepFreeze } from "../foundation/deep-freeze.js";
import type { RegisteredTool } from "../tools/tool-definition.js";

/**
 * The agent settings that declare tools' idempotency classes (seed 004 "Idempotency & Retry Safety"). Each
 * entry names a tool as the model sees it (`<server>__<tool>`) or an MCP server (all its tools).
 */
export interface ToolIdempotencySettings {
  readonly readOnlyTools?: readonly string[];
  readonly idempotentTools?: readonly string[];
  readonly destructiveTools?: readonly string[];
}

type ConfiguredClass = "read_only" | "idempotent" | "destructive";

/** Most cautious first: when one name is in several lists, the class that repeats and asks least loses. */
const byCaution: readonly [ConfiguredClass, keyof ToolIdempotencySettings][] = [
  ["destructive", "destructiveTools"],
  ["idempotent", "idempotentTools"],
  ["read_only", "readOnlyTools"],
];

/** The hints that decide a class (see idempotencyClassOf); every other annotation the tool declared stays. */
const hintsOf: Readonly<Record<ConfiguredClass, Readonly<Record<string, boolean>>>> = {
  read_only: { readOnlyHint: true, destructiveHint: false },
  idempotent: { readOnlyHint: false, idempotentHint: true, destructiveHint: false },
  destructive: { readOnlyHint: false, destructiveHint: true },
};

function configuredClass(
  manifest: ToolManifestEntry,
  settings: ToolIdempotencySettings,
): ConfiguredClass | null {
  // The tool's own name wins over its server's, as in `toolCache`.
  const names = [manifest.name, ...(manifest.source.server !== null ? [manifest.source.server] : [])];
  for (const name of names) {
    for (const [idempotency, key] of byCaution) {
      if (settings[key]?.includes(name) === true) return idempotency;
    }
  }
  return null;
}

/**
 * The tools with their configured idempotency class written into their manifest annotations, overriding what the
 * tool declared. Written there (rather than consulted beside the manifest) so that the contract hashes the class
 * each tool runs under, and every reader of the annotations (approvals and in-flight calls on resume through
 * idempotencyClassOf, the read-only cache, replay) sees one answer. A tool no setting names is returned as it is.
 */
export function configureToolIdempotency(
  tools: readonly RegisteredTool[],
  settings: ToolIdempotencySettings,
): RegisteredTool[] {
  return tools.map((tool) => {
    const idempotency = configuredClass(tool.manifest, settings);
    if (idempotency === null) return tool;
    const manifest: ToolManifestEntry = deepFreeze({
      ...tool.manifest,
      annotations: { ...(tool.manifest.annotations ?? {}), ...hintsOf[idempotency] },
    });
    return {
      manifest,
      ...(tool.queue !== undefined ? { queue: tool.queue } : {}),
      // The source's own retry after a lost connection follows the configured class too, not the server's hints.
      execute: (input, context) =>
        tool.execute(input, {
          ...context,
          repeatable: idempotency === "read_only" || idempotency === "idempotent",
        }),
    };
  });
}
