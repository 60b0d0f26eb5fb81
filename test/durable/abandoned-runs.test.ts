import { writeFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import { cli } from "../cli/cli-harness.js";
import {
  closeDurableHarness,
  durableWorkspace,
  fileSatisfies,
  killChild,
  records,
  runArguments,
  startCharter,
} from "./durable-harness.js";

/**
 * A run records who runs it (process id, host, the process's start time): `runs list` and `runs show` show a run
 * whose process was killed with SIGKILL as `abandoned`, with the command that continues it, and `resume` takes it
 * at once (nothing to wait for: the owner is known to be gone).
 */
afterEach(closeDurableHarness);

describe("a run whose process is gone", () => {
  it("is running while its process lives, abandoned once it is killed, and resumed at once", async () => {
    const { directory, recordFile, store } = await durableWorkspace([
      { kind: "tool_calls", calls: [{ name: "test__record_until_released", arguments: { key: "held" } }] },
      {
        kind: "tool_calls",
        calls: [{ name: "final_report", arguments: { format: "markdown", content: "done" } }],
      },
    ]);
    const run = startCharter(runArguments(directory, store), directory);
    await fileSatisfies(recordFile, (text) => text.includes('"held"'));
    const pid = (await records(recordFile))[0] as unknown as { pid: number };

    const list = async () =>
      JSON.parse((await cli(["runs", "list", "--json", "--store", store])).stdout) as {
        runId: string;
        status: string;
        owner: { pid: number; host: string; startedAt: string } | null;
        heartbeatAt: string | null;
        resumeCommand: string | null;
      }[];
    const [live] = await list();
    // Its owner is the charter process (the MCP server holding the call is that process's child).
    expect(live).toMatchObject({
      status: "running",
      resumeCommand: null,
      owner: { host: expect.any(String) },
    });
    expect(live?.owner?.pid).not.toBe(pid.pid);
    expect(live?.heartbeatAt).toEqual(expect.any(String));

    await killChild(run);
    const [gone] = await list();
    const runId = gone?.runId ?? "";
    expect(gone).toMatchObject({
      status: "abandoned",
      resumeCommand: `charter resume ${runId}`,
      owner: live?.owner,
    });
    const listed = await cli(["runs", "list", "--store", store]);
    expect(listed.stdout).toContain(`abandoned`);
    expect(listed.stdout).toContain(`continue with: charter resume ${runId}`);
    const shown = await cli(["runs", "show", runId, "--store", store]);
    expect(shown.stdout).toContain("status: abandoned");
    expect(shown.stdout).toContain(`resumeCommand: charter resume ${runId}`);

    await writeFile(`${recordFile}.release`, "");
    const resumed = await cli(["resume", runId, "--json", "--store", store]);
    const result = JSON.parse(resumed.stdout) as AIAgentResult;
    expect(result).toMatchObject({ runId, finalReport: { content: "done" } });
    const [after] = await list();
    expect(after).toMatchObject({ status: "completed", resumeCommand: null });
    // The resuming process took the run over: it is recorded as its owner now.
    expect(after?.owner?.pid).toBe(process.pid);
  });
});
