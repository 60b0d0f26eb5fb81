import { contractInvalid } from "./contract-factory-invalid.js";
import type { ToolManifestEntry } from "./execution-contract.js";

/**
 * The manifest in a deterministic order (by name, compared by UTF-16 code units like the canonical JSON
 * keys), so that discovery order never changes the contract hash. Two tools with one name are refused:
 * the model could not tell them apart.
 */
export function sortedToolManifest(manifest: readonly ToolManifestEntry[]): ToolManifestEntry[] {
  const sorted = [...manifest].sort((left, right) =>
    left.name < right.name ? -1 : left.name > right.name ? 1 : 0,
  );
  const issues: { path: string; message: string }[] = [];
  for (let index = 1; index < sorted.length; index++) {
    const name = sorted[index]?.name;
    if (name === sorted[index - 1]?.name) {
      issues.push({ path: `tool_manifest.${name}`, message: `more than one tool is named "${name}"` });
    }
  }
  if (issues.length > 0) throw contractInvalid(issues);
  return sorted;
}
