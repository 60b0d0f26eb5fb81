import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type RecordedRequest,
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { stateHash, workingTreeListing } from "../../src/work/state-listing.js";
import type { WorkPlanResult } from "../../src/work/work-plan-result.js";
import type { WorkReceipt } from "../../src/work/work-receipt.js";
import { openWorkRepository } from "../../src/work/work-repository.js";
import { agentFile, cli, localModelProvider } from "../cli/cli-harness.js";

/**
 * What the model answers one item: a fixed script, or a function of how many times that item has asked (0 for its
 * first request), which may hold its answer (a promise) until something else happened.
 */
export type ItemAnswers = readonly ScriptedStep[] | ((turn: number) => ScriptedStep | Promise<ScriptedStep>);

/** The work item a model request is for: the task starts `Work item <id>:`. */
export function requestItem(request: RecordedRequest): string | null {
  return /Work item ([A-Za-z0-9._-]+):/.exec(request.bodyText)?.[1] ?? null;
}

/**
 * One scripted model server for every item of a plan, answering each request from that item's own answers; a
 * folder with the agent (`agent.md`), its `.charter.json` and one `<id>.json` work item file per item.
 */
export async function planSetup(
  items: Readonly<Record<string, { readonly item?: Record<string, unknown>; readonly answers: ItemAnswers }>>,
) {
  const turns = new Map<string, number>();
  const server: ScriptedOpenAIServer = await startScriptedOpenAIServer({
    respond: (request) => {
      const id = requestItem(request) ?? "";
      const turn = turns.get(id) ?? 0;
      turns.set(id, turn + 1);
      const answers = items[id]?.answers;
      if (answers === undefined)
        return { kind: "error", status: 500, body: { error: `no answers for ${id}` } };
      if (typeof answers === "function") return answers(turn);
      return (
        answers[turn] ?? { kind: "error", status: 500, body: { error: `${id} asked ${turn + 1} times` } }
      );
    },
  });
  const folder = await mkdtemp(join(tmpdir(), "charter-plan-items-"));
  await writeFile(join(folder, "agent.md"), agentFile("models: [local/m]\nmaxTurns: 20"));
  await writeFile(
    join(folder, ".charter.json"),
    JSON.stringify({ providers: localModelProvider(server.baseUrl) }),
  );
  for (const [id, { item }] of Object.entries(items)) {
    await writeFile(
      join(folder, `${id}.json`),
      JSON.stringify({ id, agent_id: "agent.md", description: `Do ${id}.`, ...item }),
    );
  }
  const runsDirectory = join(folder, "runs");
  /** `charter work plan <folder> --json` in process. */
  async function run(repository: string, extra: readonly string[] = []) {
    const output = await cli([
      "work",
      "plan",
      folder,
      "--repo",
      repository,
      "--json",
      "--runs-dir",
      runsDirectory,
      ...extra,
    ]);
    const result = output.stdout === "" ? null : (JSON.parse(output.stdout) as WorkPlanResult);
    return { ...output, result };
  }
  /** The model requests each item made, by item id. */
  function requestsOf(id: string): number {
    return server.requests.filter((request) => requestItem(request) === id).length;
  }
  return { server, folder, runsDirectory, run, requestsOf };
}

export async function hashOf(root: string): Promise<string> {
  return stateHash(await workingTreeListing(await openWorkRepository(root)));
}

export async function receiptAt(path: string): Promise<WorkReceipt> {
  return JSON.parse(await readFile(path, "utf8")) as WorkReceipt;
}

/** A promise and the function that resolves it: a barrier a test opens when something has happened. */
export function barrier(): { readonly opened: Promise<void>; open(): void } {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolveBarrier) => {
    open = resolveBarrier;
  });
  return { opened, open };
}
