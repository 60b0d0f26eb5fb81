import { copyFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemEnvironment } from "../../src/foundation/environment.js";
import { replayStoredRun } from "../../src/runner/replay-stored-run.js";
import { resumeStoredRun } from "../../src/runner/resume-stored-run.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import { verifyStoredRun } from "../../src/store/verify-stored-run.js";
import { type RestTestServer, startRestTestServer } from "../../src/testing/rest-test-server.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";

/**
 * A durable run started by `charter run` of a Charter whose contracts were schema version 2 (git 604ee0d), stopped
 * for the approval of a destructive REST call (test/fixtures/store/make-contract-v2-run.mjs), resumed by this
 * Charter: its contract is rebuilt as version 2 built it, to the hash it recorded, and the run goes on under it.
 */
const fixtures = resolve(import.meta.dirname, "../fixtures/store/contract-v2");
const fixtureDatabase = join(fixtures, "awaiting-approval.sqlite");
const runId = "run_340021b943d04b429f354b1ae248e72a";
const recordedContractHash = "0dea26ffd1750524fadd63e1790867e9068d012fece3891e37b655cbb127d5bd";
// Where the run recorded its agent file, configuration and working directory (absolute paths).
const recordedDirectory = "/tmp/charter-contract-v2-fixture";

let model: ScriptedOpenAIServer | null = null;
let rest: RestTestServer | null = null;
let work: string | null = null;
afterEach(async () => {
  await model?.close();
  await rest?.close();
  if (work !== null) await rm(work, { recursive: true, force: true });
  model = null;
  rest = null;
  work = null;
});

/**
 * Writes the agent file and configuration where the run recorded them. Other test processes may do the same at
 * once: each file is written whole under another name and renamed into place, with the same bytes every time.
 */
async function placeRecordedFiles(): Promise<void> {
  await mkdir(recordedDirectory, { recursive: true });
  for (const name of ["agent.md", "charter.json"]) {
    const staged = join(recordedDirectory, `.${name}.${process.pid}`);
    await writeFile(staged, await readFile(join(fixtures, name)));
    await rename(staged, join(recordedDirectory, name));
  }
}

describe("a durable run recorded under contract schema version 2", () => {
  it("resumes with this Charter: the approved call runs once, under the recorded contract, and the run verifies and replays", async () => {
    await placeRecordedFiles();
    const original = await readFile(fixtureDatabase);
    work = await mkdtemp(join(tmpdir(), "charter-contract-v2-"));
    const store = join(work, "charter.db");
    await copyFile(fixtureDatabase, store);
    model = await startScriptedOpenAIServer({
      respond: () => ({
        kind: "tool_calls",
        calls: [{ name: "final_report", arguments: { format: "markdown", content: "item-7 erased" } }],
      }),
    });
    rest = await startRestTestServer();

    const before = await openRunStore({ path: store, environment: systemEnvironment });
    try {
      expect(await before.getRun(runId)).toMatchObject({
        status: "awaiting_approval",
        contractHash: recordedContractHash,
        contract: { schema_version: 2, adapter_version: "charter-adapter/1" },
      });
    } finally {
      await before.close();
    }

    const result = await resumeStoredRun({
      runId,
      store,
      approve: ["call_erase"],
      cwd: work,
      homeDirectory: work,
      runsDirectory: join(work, "runs"),
      processEnvironment: { CHARTER_FIXTURE_MODEL_URL: model.baseUrl, CHARTER_FIXTURE_REST_URL: rest.url },
    });
    expect(result.error).toBeNull();
    expect(result).toMatchObject({
      outcome: "COMPLETED_WITH_TOOLS",
      contractHash: recordedContractHash,
      finalReport: { content: "item-7 erased" },
    });
    expect(rest.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      "DELETE /items/item-7",
    ]);

    const after = await openRunStore({ path: store, environment: systemEnvironment });
    try {
      expect(await after.getRun(runId)).toMatchObject({
        status: "completed",
        contractHash: recordedContractHash,
        contract: { schema_version: 2 },
      });
      expect(await verifyStoredRun(after, runId)).toMatchObject({
        ok: true,
        head_hash: result.transcript.headHash,
      });
      expect(await replayStoredRun(after, runId)).toMatchObject({
        ok: true,
        outcome: "COMPLETED_WITH_TOOLS",
        headHash: result.transcript.headHash,
      });
    } finally {
      await after.close();
    }
    // The fixture itself is never changed.
    expect((await readFile(fixtureDatabase)).equals(original)).toBe(true);
  });
});
