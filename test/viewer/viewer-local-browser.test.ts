import { type ChildProcess, spawn } from "node:child_process";
import { DatabaseSync } from "node:sqlite";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { charterBinary } from "../cli/cli-harness.js";
import { type RunningServer, startRunningServer } from "../server/run-project.js";
import { browserAvailable, launchChromium, watchedPage } from "./browser-harness.js";

/** `charter view` as a real child process, once it has printed the address to open. */
async function startView(
  argv: readonly string[],
): Promise<{ child: ChildProcess; address: string; url: string }> {
  const child = spawn(process.execPath, [charterBinary, "view", ...argv], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  return new Promise((resolveStarted, rejectStarted) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const listening = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      const url = /open (http:\/\/\S+)/.exec(output)?.[1];
      if (listening !== undefined && url !== undefined) resolveStarted({ child, address: listening, url });
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    child.on("close", (code) => rejectStarted(new Error(`charter view exited with ${code}: ${output}`)));
  });
}

describe.skipIf(!browserAvailable)("charter view in Chromium", () => {
  let browser: Browser;
  let api: RunningServer;
  beforeAll(async () => {
    [browser, api] = await Promise.all([
      launchChromium(),
      startRunningServer("sqlite", () => ({ kind: "text", text: "done" })),
    ]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it("serves a local store's runs read-only on 127.0.0.1, signed in once by the printed one-time token", async () => {
    const operator = await api.key("acme", "operator");
    const acmeRun = (
      await api.request("POST", "/v1/runs", {
        key: operator,
        body: { agent: "helper", prompt: "Hi", wait: true },
      })
    ).body.runId as string;
    const otherRun = (
      await api.request("POST", "/v1/runs", {
        key: await api.key("globex", "operator"),
        body: { agent: "helper", prompt: "Hi", wait: true },
      })
    ).body.runId as string;
    // Every request the API server counted so far, to compare with what is counted once the viewer has served.
    const storePath = api.storeUrl.replace(/^sqlite:/, "");
    const requestsCounted = (): number => {
      const database = new DatabaseSync(storePath, { readOnly: true });
      try {
        const row = database
          .prepare("SELECT coalesce(sum(count), 0) AS counted FROM charter_rate_windows")
          .get();
        return Number(row?.counted);
      } finally {
        database.close();
      }
    };
    const countedBeforeViewing = requestsCounted();
    expect(countedBeforeViewing).toBeGreaterThan(0);
    const view = await startView([
      "--store",
      api.storeUrl.replace(/^sqlite:/, ""),
      "--tenant",
      "acme",
      "--port",
      "0",
    ]);
    try {
      expect(view.address).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const { page, context, errors } = await watchedPage(browser);
      await page.goto(view.url);
      await page.locator(`tr[data-run-id="${acmeRun}"]`).getByText("completed", { exact: true }).waitFor();
      expect(await page.locator(`tr[data-run-id="${otherRun}"]`).count()).toBe(0);
      // The token left the address bar, and the page says it is read-only.
      expect(page.url()).not.toContain("token=");
      await page.getByText("viewer · read-only").waitFor();
      await page.locator(`a[href="#/runs/${acmeRun}"]`).click();
      await page.getByRole("button", { name: "Verify the transcript now" }).click();
      await page.getByText("the chain is intact").waitFor();
      expect(errors).toEqual([]);
      await context.close();

      // The token is spent: a second visit is not signed in.
      const token = new URL(view.url).searchParams.get("token");
      const again = await fetch(`${view.address}/v1/view/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token }),
      });
      expect(again.status).toBe(401);
      // Nothing that changes runs exists here, whoever asks.
      for (const [method, path] of [
        ["POST", "/v1/runs"],
        ["POST", `/v1/runs/${acmeRun}/approvals`],
        ["POST", `/v1/runs/${acmeRun}/cancel`],
        ["POST", "/v1/keys"],
        ["PUT", "/v1/tenant/config"],
      ] as const) {
        const answer = await fetch(`${view.address}${path}`, {
          method,
          headers: { "content-type": "application/json" },
          body: "{}",
        });
        expect(answer.status, `${method} ${path}`).toBe(404);
        expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("ROUTE_NOT_FOUND");
      }
      expect((await fetch(`${view.address}/v1/runs`)).status).toBe(401);
      // The store was opened to be read: the viewer counted none of its requests into it.
      expect(requestsCounted()).toBe(countedBeforeViewing);
    } finally {
      view.child.kill("SIGTERM");
    }
  }, 90_000);
});
