import { dirname, extname, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { describeSchemaIssues, schemaIssues } from "../config/schema-issues.js";
import { CharterError } from "../foundation/charter-error.js";
import { contentHash } from "../foundation/content-hash.js";
import { readFileText } from "../foundation/read-file-text.js";
import { type WorkItem, workItemSchema } from "./work-item-schema.js";

/** A work item read from its file: the item (defaults applied), where it came from and its content hash. */
export interface LoadedWorkItem {
  readonly item: WorkItem;
  /** Absolute path of the file; an agent file path in `agent_id` is relative to its folder. */
  readonly path: string;
  readonly directory: string;
  /** BLAKE3 of the RFC 8785 canonical JSON of the item with its defaults applied. */
  readonly hash: string;
}

/** Reads and validates a work item file (`.yaml`, `.yml` or `.json`); WORK_ITEM_INVALID names the file and field. */
export async function loadWorkItem(path: string): Promise<LoadedWorkItem> {
  const absolutePath = resolve(path);
  const text = await readFileText(absolutePath, "WORK_ITEM_INVALID", "cannot read work item file");
  return parseWorkItem(text, absolutePath);
}

export function parseWorkItem(text: string, path: string): LoadedWorkItem {
  let data: unknown;
  try {
    data = extname(path) === ".json" ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new CharterError(
      "WORK_ITEM_INVALID",
      `work item file ${path} is not valid ${extname(path) === ".json" ? "JSON" : "YAML"}: ${String(error)}`,
      {
        details: { file: path, field: "", reason: "syntax" },
      },
    );
  }
  return validateWorkItem(data, path, []);
}

/**
 * Validates one work item's data from `path` (at `keyPrefix` within it: `items[2]` in a plan file); WORK_ITEM_INVALID
 * names the file and the field. An agent file path in the item is relative to the file's folder.
 */
export function validateWorkItem(
  data: unknown,
  path: string,
  keyPrefix: readonly (string | number)[],
): LoadedWorkItem {
  const parsed = workItemSchema.safeParse(data);
  if (!parsed.success) {
    const issues = schemaIssues(parsed.error, keyPrefix, workItemSchema);
    const first = issues[0];
    throw new CharterError("WORK_ITEM_INVALID", `work item file ${path}: ${describeSchemaIssues(issues)}`, {
      details: { file: path, field: first?.key ?? "", issues },
    });
  }
  const item = parsed.data;
  return { item, path, directory: dirname(path), hash: contentHash(item) };
}
