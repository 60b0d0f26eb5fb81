// `npm run screenshots`: the run viewer's main views as PNGs in docs/images/, from a server with a few runs on the
// scripted model, in the Chromium the browser tests use. Not a test (vitest runs it through its own config).
import { join, resolve } from "node:path";
import { it } from "vitest";
import type { RecordedRequest } from "../../src/testing/scripted-openai-server.js";
import { eventually } from "../server/execution-harness.js";
import { type RunningServer, startRunningServer } from "../server/run-project.js";
import { launchChromium, signIn, watchedPage } from "./browser-harness.js";

const images = resolve(import.meta.dirname, "../../docs/images");

function lastUserText(request: RecordedRequest): string {
  const messages = (request.body as { messages?: { role: string; content?: unknown }[] }).messages ?? [];
  return String(messages.filter((message) => message.role === "user").at(-1)?.content ?? "");
}

function hasToolResult(request: RecordedRequest): boolean {
  const messages = (request.body as { messages?: { role: string }[] }).messages ?? [];
  return messages.some((message) => message.role === "tool");
}

const report = [
  "## Order 4711",
  "",
  "The order was **shipped** on 3 January and is with the carrier.",
  "",
  "| parcel | status | expected |",
  "|---|---|---|",
  "| 1 of 2 | in transit | 6 January |",
  "| 2 of 2 | delivered | — |",
  "",
  "- Tracking: `DX-88213`",
  "- Recorded in the order log.",
].join("\n");

it("takes the screenshots", async () => {
  let api: RunningServer | null = null;
  const server = await startRunningServer("sqlite", (request) => {
    const prompt = lastUserText(request);
    api?.environment.advance(Number(/ms=(\d+)/.exec(prompt)?.[1] ?? 1500));
    if (prompt.includes("fail")) return { kind: "error", status: 400 };
    if (prompt.includes("Record")) {
      return hasToolResult(request)
        ? { kind: "text", text: report, usage: { prompt_tokens: 1840, completion_tokens: 96 } }
        : {
            kind: "tool_calls",
            calls: [
              { id: "call_log", name: "test__record", arguments: { key: "order-4711", value: "shipped" } },
            ],
            usage: { prompt_tokens: 1719, completion_tokens: 24 },
          };
    }
    return {
      kind: "text",
      text: "Done: the answer is 42.",
      usage: { prompt_tokens: 420, completion_tokens: 18 },
    };
  });
  api = server;
  const browser = await launchChromium();
  try {
    const operator = await server.key("acme", "operator", "ada");
    for (const prompt of [
      "ms=40000",
      "ms=70000",
      "fail ms=20000",
      "ms=90000",
      "ms=30000",
      "fail ms=50000",
      "ms=60000",
    ]) {
      await server.request("POST", "/v1/runs", {
        key: operator,
        body: { agent: "helper", prompt, wait: true },
      });
    }
    const recorded = await server.request("POST", "/v1/runs", {
      key: operator,
      body: { agent: "recorder", prompt: "Record that order 4711 shipped, then report on it.", wait: true },
    });
    const recordedId = recorded.body.runId as string;
    await server.request("POST", `/v1/runs/${recordedId}/approvals`, {
      key: operator,
      body: { callId: "call_log", decision: "approve" },
    });
    await eventually("the approved run to finish", async () => {
      const run = await server.request("GET", `/v1/runs/${recordedId}`, { key: operator });
      return run.body.lifecycle === "COMPLETED";
    });
    const waiting = await server.request("POST", "/v1/runs", {
      key: operator,
      body: { agent: "recorder", prompt: "Record that order 4712 is cancelled.", wait: true },
    });

    const { page } = await watchedPage(browser);
    // The browser's clock at the server's (deterministic) time, so that "the last hour" holds the runs above.
    await page.clock.setFixedTime(new Date(server.environment.now() + 60_000));
    await signIn(page, server.address, operator);
    await page.locator(`tr[data-run-id="${waiting.body.runId}"]`).waitFor();
    await page.screenshot({ path: join(images, "viewer-runs.png") });

    await page.goto(`${server.address}/#/runs/${recordedId}`);
    await page.locator("#timeline table.tool-calls").waitFor();
    await page.locator("#report table").waitFor();
    await page.getByRole("button", { name: "Verify the transcript now" }).click();
    await page.getByText("the chain is intact").waitFor();
    await page.screenshot({ path: join(images, "viewer-run.png"), fullPage: true });

    await page.getByRole("link", { name: "Approvals" }).click();
    await page.getByRole("button", { name: "Approve test__record" }).waitFor();
    await page.screenshot({ path: join(images, "viewer-approvals.png") });

    await page.getByRole("link", { name: "Statistics" }).click();
    await page.getByRole("img", { name: "Runs per minute" }).waitFor();
    await page.screenshot({ path: join(images, "viewer-stats.png"), fullPage: true });
  } finally {
    await browser.close();
    await server.close();
  }
}, 180_000);
