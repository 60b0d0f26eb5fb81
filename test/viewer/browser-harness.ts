import { existsSync } from "node:fs";
import type { Browser, BrowserContext, ConsoleMessage, Page } from "playwright-core";

/**
 * The Chromium the browser tests drive: `CHARTER_TEST_CHROMIUM`, else Debian's `chromium` package (which
 * `.ci/run` installs). Without one the browser tests are skipped locally; in CI (`CI=true`) they fail instead,
 * so that CI never passes without having run them.
 */
export const chromiumPath =
  process.env.CHARTER_TEST_CHROMIUM ??
  ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((path) => existsSync(path)) ??
  "";

export const browserAvailable = chromiumPath !== "" || process.env.CI === "true";

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: chromiumPath === "" ? "/usr/bin/chromium" : chromiumPath,
    headless: true,
    // CI runs as root, where Chromium's sandbox cannot start; the page tested is our own.
    chromiumSandbox: false,
  });
}

/** A page whose JavaScript errors (uncaught exceptions and console errors) are kept for the test to check. */
export interface WatchedPage {
  readonly page: Page;
  readonly context: BrowserContext;
  readonly errors: string[];
}

export async function watchedPage(browser: Browser): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
  page.on("console", (message: ConsoleMessage) => {
    // Chromium logs each HTTP error answer ("Failed to load resource: ... 404") as a console error: those are
    // answers the page expects and handles (another tenant's run is a 404), not JavaScript errors.
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
      errors.push(`console error: ${message.text()}`);
    }
  });
  return { page, context, errors };
}

/** Opens the viewer and signs in with `key` as a person would: the form, the key typed, the button. */
export async function signIn(page: Page, address: string, key: string): Promise<void> {
  await page.goto(`${address}/`);
  await page.getByLabel("API key or token").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Views" }).waitFor();
}
