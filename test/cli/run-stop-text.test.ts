import { describe, expect, it } from "vitest";
import { runStopText } from "../../src/cli/run-stop-text.js";
import { tenantFlag } from "../../src/cli/tenant-flag.js";
import type { AIAgentResult } from "../../src/session/agent-result.js";

/** A run stopped for the approval of one call, as `charter run` reports it. */
const stopped = {
  success: false,
  outcome: "INTERRUPTED",
  runId: "run-7",
  error: { code: "APPROVAL_REQUIRED", message: "waiting for approval" },
  pendingApprovals: [{ turn: 1, callId: "call_1", tool: "test__record", arguments: {} }],
  transcript: { entries: 9 },
} as unknown as AIAgentResult;

describe("the stop message of a tenant's run", () => {
  it("names --tenant in every command, since only that tenant finds the run", () => {
    const text = runStopText(stopped, { tenantId: "acme" });
    expect(text).toContain("charter resume run-7 --tenant acme --approve call_1");
    expect(text).toContain("charter resume run-7 --tenant acme --deny call_1");
    expect(text).toContain("charter runs show run-7 --tenant acme --conversation");
    expect(runStopText(stopped)).toContain("charter resume run-7 --approve call_1");
  });

  it("quotes a tenant a shell would split or expand", () => {
    expect(tenantFlag(null)).toBe("");
    expect(tenantFlag("team:a.b@x")).toBe(" --tenant team:a.b@x");
    expect(tenantFlag("it's $HOME")).toBe(` --tenant 'it'\\''s $HOME'`);
  });
});
