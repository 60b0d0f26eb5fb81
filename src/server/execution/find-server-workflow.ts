import { access } from "node:fs/promises";
import { join } from "node:path";
import { CharterError } from "../../foundation/charter-error.js";

const workflowExtensions = [".workflow.yaml", ".workflow.yml", ".workflow.json"] as const;

/**
 * The file of the workflow a client names: `<name>.workflow.yaml` (`.yml`, `.json`) in the server's workflows
 * folder. The name is checked as a workflow id first (lowercase letters, digits and hyphens), so it never leads out
 * of the folder; a client never gives a path. WORKFLOW_NOT_FOUND when the server has no such workflow (or no
 * workflows folder at all).
 */
export async function findServerWorkflow(directory: string | undefined, name: string): Promise<string> {
  if (directory === undefined) {
    throw new CharterError(
      "WORKFLOW_NOT_FOUND",
      `no workflow ${name}: this server starts no workflows (its configuration has no server.workflows folder)`,
      { details: { workflow: name, reason: "no_workflows_folder" } },
    );
  }
  if (/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name)) {
    for (const extension of workflowExtensions) {
      const path = join(directory, `${name}${extension}`);
      try {
        await access(path);
        return path;
      } catch {
        // Not this extension.
      }
    }
  }
  throw new CharterError("WORKFLOW_NOT_FOUND", `no workflow ${name} on this server`, {
    details: { workflow: name, reason: "unknown_workflow" },
  });
}

/** The working tree of the repository a client names, from `server.repositories`; WORK_REPOSITORY_NOT_FOUND otherwise. */
export function findServerRepository(
  repositories: Readonly<Record<string, string>> | undefined,
  name: string,
): string {
  const path =
    repositories !== undefined && Object.hasOwn(repositories, name) ? repositories[name] : undefined;
  if (path === undefined) {
    throw new CharterError(
      "WORK_REPOSITORY_NOT_FOUND",
      `no repository ${name} on this server: work items run only in the repositories server.repositories names`,
      { details: { repository: name, repositories: Object.keys(repositories ?? {}).sort() } },
    );
  }
  return path;
}
