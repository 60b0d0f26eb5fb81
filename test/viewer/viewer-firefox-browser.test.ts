import { existsSync } from "node:fs";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startRunningServer } from "../server/run-project.js";

/**
 * Debian's Firefox ESR, driven over WebDriver BiDi by puppeteer-core (playwright-core's BiDi driver needs commands
 * this Firefox does not have yet). A smoke test: the main views load without JavaScript errors. Skipped where no
 * Firefox is installed (`apt-get install firefox-esr`); CI does not install it.
 */
const firefoxPath =
  process.env.CHARTER_TEST_FIREFOX ??
  ["/usr/bin/firefox-esr", "/usr/bin/firefox"].find((path) => existsSync(path)) ??
  "";

async function showsText(page: Page, text: string): Promise<void> {
  // A predicate as text: it runs in the page, whose `document` this file's Node types do not declare.
  await page.waitForFunction(`document.body.textContent.includes(${JSON.stringify(text)})`, {
    timeout: 10_000,
  });
}

describe.skipIf(firefoxPath === "")("the run viewer in Firefox", () => {
  let browser: Browser;
  let api: RunningServer;
  beforeAll(async () => {
    const puppeteer = (await import("puppeteer-core")).default;
    [browser, api] = await Promise.all([
      puppeteer.launch({ browser: "firefox", executablePath: firefoxPath, headless: true }),
      startRunningServer("sqlite", () => ({ kind: "text", text: "## Done\n\nAll **well**." })),
    ]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it("loads the runs list, a run, approvals and statistics without JavaScript errors", async () => {
    const operator = await api.key("acme", "operator");
    const done = await api.request("POST", "/v1/runs", {
      key: operator,
      body: { agent: "helper", prompt: "Hi", wait: true },
    });
    const runId = done.body.runId as string;
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(`page error: ${String(error)}`));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(`console error: ${message.text()}`);
    });
    await page.goto(`${api.address}/`);
    await page.waitForSelector("#credential");
    await page.type("#credential", operator);
    await page.click("form.sign-in button[type=submit]");
    await page.waitForSelector(`tr[data-run-id="${runId}"]`);
    await page.click(`a[href="#/runs/${runId}"]`);
    await page.waitForSelector("#report strong");
    expect(await page.$eval("#report strong", (strong) => strong.textContent)).toBe("well");
    await page.waitForSelector("#timeline table.model-calls");
    await page.click('a[data-nav="approvals"]');
    await showsText(page, "No run waits for an approval.");
    await page.click('a[data-nav="stats"]');
    await page.waitForSelector("#chart-runs svg");
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
