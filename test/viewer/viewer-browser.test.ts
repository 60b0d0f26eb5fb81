import { readFile } from "node:fs/promises";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordedRequest } from "../../src/testing/scripted-openai-server.js";
import { type RunningServer, startRunningServer } from "../server/run-project.js";
import { segmentTampering, sqliteSegmentTable } from "../store/segment-tampering.js";
import { browserAvailable, launchChromium, signIn, watchedPage } from "./browser-harness.js";

/** The `recorder` agent records a thing (a destructive call: the run waits for a person), then reports. */
function recordThenReport(request: RecordedRequest) {
  const messages = (request.body as { messages?: { role: string }[] }).messages ?? [];
  return messages.some((message) => message.role === "tool")
    ? { kind: "text" as const, text: "## Recorded\n\nThe order is **42**. <script>alert(1)</script>" }
    : {
        kind: "tool_calls" as const,
        calls: [{ id: "call_record", name: "test__record", arguments: { key: "order", value: "42" } }],
      };
}

describe.skipIf(!browserAvailable)("the run viewer in Chromium", () => {
  let browser: Browser;
  let api: RunningServer;
  beforeAll(async () => {
    [browser, api] = await Promise.all([launchChromium(), startRunningServer("sqlite", recordThenReport)]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it("lists a run started through the API live, lets a person approve its destructive call, and the run completes", async () => {
    const { page, context, errors } = await watchedPage(browser);
    const operator = await api.key("acme", "operator", "ada");
    await signIn(page, api.address, operator);
    await page.getByRole("heading", { name: "Runs" }).waitFor();
    await page.getByText("No runs match.").waitFor();

    // Started after the page was opened: the list shows it without a reload.
    const started = await api.request("POST", "/v1/runs", {
      key: operator,
      body: { agent: "recorder", prompt: "Record order 42." },
    });
    const runId = started.body.runId as string;
    const row = page.locator(`tr[data-run-id="${runId}"]`);
    await row.getByText("awaiting approval").waitFor();
    expect(await row.locator("td").nth(1).textContent()).toBe("recorder");

    // The approvals view shows the pending call with its arguments; approving it in the page continues the run.
    await page.getByRole("link", { name: "Approvals" }).click();
    const approval = page.locator(`.approval-run[data-run-id="${runId}"]`);
    await approval.getByText('"value": "42"').waitFor();
    await approval.getByRole("button", { name: "Approve test__record" }).click();
    await approval.getByText("Approved test__record (call_record); the run continues.").waitFor();

    await page.goto(`${api.address}/#/runs/${runId}`);
    await page.locator("#report").getByRole("heading", { name: "Recorded" }).waitFor();
    await page.locator("dl.summary").getByText("completed").first().waitFor();
    // The call ran once, for real.
    expect((await readFile(api.recordFile, "utf8")).trim().split("\n")).toHaveLength(1);
    // The model's HTML is text, never markup: no script element came from the report.
    expect(await page.locator("#report script").count()).toBe(0);
    await page.locator("#report").getByText("<script>alert(1)</script>").waitFor();
    // Live progress: the run's lifecycle events, to its end.
    await page.locator('#live-events li[data-event="COMPLETED"]').waitFor();

    // The timeline shows what the transcript holds: each model call's target and tokens, each tool call.
    const transcript = await api.request("GET", `/v1/runs/${runId}/transcript`, { key: operator });
    const inferences = (
      transcript.body.entries as {
        state: string;
        model_fingerprint: string;
        result: { usage: { inputTokens: number; outputTokens: number } };
      }[]
    ).filter((entry) => entry.state === "INFER");
    const modelRows = page.locator("#timeline table.model-calls tbody tr");
    expect(await modelRows.count()).toBe(inferences.length);
    for (const [index, inference] of inferences.entries()) {
      const cells = await modelRows.nth(index).locator("td").allTextContents();
      expect(cells[0]).toBe(inference.model_fingerprint);
      expect(cells[4]).toBe(inference.result.usage.inputTokens.toLocaleString("en-US"));
      expect(cells[5]).toBe(inference.result.usage.outputTokens.toLocaleString("en-US"));
    }
    const toolRow = page.locator('#timeline table.tool-calls tr[data-call-id="call_record"]');
    const toolCells = await toolRow.locator("td").allTextContents();
    expect(toolCells[0]).toBe("test__record");
    expect(JSON.parse(toolCells[2] as string)).toEqual({ key: "order", value: "42" });
    expect(toolCells[3]).toContain("ok");

    // The contract: its hash, limits and tools.
    const contract = await api.store.forTenant("acme").getRun(runId);
    expect(await page.locator("#contract code.hash").textContent()).toBe(contract?.contractHash);
    expect(await page.locator("#contract ul.tools code").allTextContents()).toContain("test__record");

    // Verification recomputed on request: intact.
    await page.getByRole("button", { name: "Verify the transcript now" }).click();
    await page.getByText(`Verified: ${contract?.entryCount} entries, the chain is intact.`).waitFor();

    expect(errors).toEqual([]);
    await context.close();
  });

  it("shows a tampered transcript as failed verification, naming the first bad entry", async () => {
    const { page, context, errors } = await watchedPage(browser);
    const operator = await api.key("acme", "operator");
    const done = await api.request("POST", "/v1/runs", {
      key: operator,
      body: { agent: "helper", prompt: "Say done.", wait: true },
    });
    const runId = done.body.runId as string;
    expect(done.body.status).toBe("completed");
    // Another process edits the stored transcript behind the store's back: entry 1's result text changes.
    const tampering = segmentTampering(sqliteSegmentTable(api.storeUrl.replace(/^sqlite:/, "")));
    const line = await tampering.entryLine(runId, 1);
    await tampering.replaceEntryLine(runId, 1, line.replace('"status":"native"', '"status":"forged"'));

    await signIn(page, api.address, operator);
    await page.goto(`${api.address}/#/runs/${runId}`);
    await page.getByRole("button", { name: "Verify the transcript now" }).click();
    const result = page.locator("#verification-result");
    await result.getByText("Verification failed").waitFor();
    expect(await result.textContent()).toMatch(/entry 1 \(turn-1\/infer-1\) — RESULT_HASH_MISMATCH/);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("shows a viewer of another tenant nothing of it, and a viewer no approve buttons", async () => {
    const operator = await api.key("acme", "operator");
    const started = await api.request("POST", "/v1/runs", {
      key: operator,
      body: { agent: "recorder", prompt: "Record order 7.", wait: true },
    });
    const runId = started.body.runId as string;
    expect(started.body.status).toBe("awaiting_approval");

    const other = await watchedPage(browser);
    await signIn(other.page, api.address, await api.key("globex", "viewer"));
    await other.page.getByText("No runs match.").waitFor();
    await other.page.goto(`${api.address}/#/runs/${runId}`);
    await other.page.getByText(`No run ${runId} in your tenant.`).waitFor();
    await other.page.getByRole("link", { name: "Approvals" }).click();
    await other.page.getByText("No run waits for an approval.").waitFor();
    expect(await other.page.content()).not.toContain(runId.concat('"'));
    expect(other.errors).toEqual([]);
    await other.context.close();

    const sameTenant = await watchedPage(browser);
    await signIn(sameTenant.page, api.address, await api.key("acme", "viewer"));
    await sameTenant.page.getByRole("link", { name: "Approvals" }).click();
    const approval = sameTenant.page.locator(`.approval-run[data-run-id="${runId}"]`);
    await approval.getByText("Your role (viewer) may not decide approvals.").waitFor();
    expect(await approval.getByRole("button").count()).toBe(0);
    // The keyboard alone: the first Tab stop skips to the content; the views are links reached by Tab and
    // followed with Enter, and the focused one is visibly outlined.
    await sameTenant.page.goto(`${api.address}/#/runs`);
    // A fresh load (the tab keeps its sign-in), so that focus starts at the top of the document.
    await sameTenant.page.reload();
    await sameTenant.page.getByRole("heading", { name: "Runs" }).waitFor();
    await sameTenant.page.keyboard.press("Tab");
    expect(await sameTenant.page.evaluate("document.activeElement.textContent")).toBe("Skip to content");
    let stops = 0;
    while (
      (await sameTenant.page.evaluate("document.activeElement.textContent")) !== "Approvals" &&
      stops < 10
    ) {
      await sameTenant.page.keyboard.press("Tab");
      stops += 1;
    }
    expect(await sameTenant.page.evaluate("getComputedStyle(document.activeElement).outlineStyle")).toBe(
      "solid",
    );
    await sameTenant.page.keyboard.press("Enter");
    await sameTenant.page.getByRole("heading", { name: "Approvals" }).waitFor();
    // Statistics: the charts are drawn from /v1/stats.
    await sameTenant.page.getByRole("link", { name: "Statistics" }).click();
    await sameTenant.page.getByRole("img", { name: "Runs per minute" }).waitFor();
    expect(sameTenant.errors).toEqual([]);
    await sameTenant.context.close();
  });
});
