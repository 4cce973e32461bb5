// The studio run page in Chromium (issue 17): a run opened by the page's own form post (Origin and
// CSRF of the session) leads to its page, which follows the status stream (app.js data-run-events,
// CSP: no inline script) and shows the image in place when the run completes; a failed run says
// nothing was charged. Every page visited is checked (browser-e2e.ts, checkPage).
import { expect, test } from "bun:test";
import {
  describeBrowser,
  type GuardedPage,
  inviteAndSignIn,
  launchBrowser,
  openGuardedPage,
} from "../helpers/browser.ts";
import type { TestServer } from "../helpers/server.ts";
import { apiAccount, browserSession, checkPage, credit } from "./browser-e2e.ts";

/** Posts the run form the way a page does (same origin, the session's CSRF token) and follows it. */
async function run(g: GuardedPage, input: unknown): Promise<string> {
  await Promise.all([
    g.page.waitForURL(/\/console\/studio\/runs\/[0-9a-f-]{36}$/),
    // A string (the tests are not compiled against the DOM's types).
    g.page.evaluate(`(() => {
      const form = document.createElement("form");
      form.method = "post";
      form.action = "/console/studio/run";
      const fields = {
        csrf: document.querySelector('meta[name="csrf-token"]').getAttribute("content"),
        model_id: "sandbox/image",
        input: ${JSON.stringify(JSON.stringify(input))},
      };
      for (const [name, value] of Object.entries(fields)) {
        const f = document.createElement("input");
        f.type = "hidden";
        f.name = name;
        f.value = value;
        form.append(f);
      }
      document.body.append(form);
      form.submit();
    })()`),
  ]);
  return new URL(g.page.url()).pathname;
}

describeBrowser("studio runs in the browser", () => {
  const session = browserSession();

  test("the run page follows the stream and shows the image in place; a failure charges nothing", async () => {
    try {
      await runAndFail(session.server, session.g);
    } catch (err) {
      // playwright-core's client, driven from bun, now and then receives a network event for a request
      // object it was already told to dispose ("Cannot find parent object request@... to create
      // response@...", then "... was not bound in the connection"); the connection is unusable after
      // it. Seen under CI load right after the form post's 303 (1 of ~10 runs); never an assertion of
      // ours. Only that protocol error is tried once more, on a new browser; anything else fails.
      if (!/Cannot find parent object|was not bound in the connection/.test(String(err))) throw err;
      const browser = await launchBrowser();
      try {
        await runAndFail(session.server, await openGuardedPage(browser, session.server.url));
      } finally {
        await browser.close();
      }
    }
  }, 180_000);
});

/** The whole flow: a slow run followed in place to its image, then a failed run that charges nothing. */
async function runAndFail(server: TestServer, g: GuardedPage): Promise<void> {
  const person = await inviteAndSignIn(g, server);
  const { account } = await apiAccount(server, person.key!);
  await credit(server, account!.id, "1.00");
  await g.goto("/console");

  // A slow run: the page shows it open, then (without a manual reload) the image.
  const path = await run(g, { prompt: "a slow cat", sandbox: { delay_ms: 1500 } });
  // Awaited first, so a playwright protocol error is what is thrown (the caller retries only that).
  expect(await g.page.locator("[data-run-events]").count()).toBe(1);
  // The finished run is swapped in place, not reloaded: this page's state survives it.
  await g.page.evaluate("window.__samePage = true");
  const img = g.page.getByRole("img", { name: "Output 1 of sandbox/image" });
  await img.waitFor({ timeout: 30_000 });
  expect(new URL(g.page.url()).pathname).toBe(path);
  expect(await img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth > 0)).toBe(true);
  expect(await g.page.getByRole("link", { name: "Download output 1" }).count()).toBe(1);
  expect(await g.page.evaluate("window.__samePage === true")).toBe(true);
  expect(await g.page.locator("[data-run-events]").count()).toBe(0);
  await checkPage(g, "studio run, completed");

  // A failed run: the error and "Nothing was charged"; the balance is back where it was.
  const before = (await apiAccount(server, person.key!)).account!;
  await run(g, { prompt: "x", sandbox: { fail: true, delay_ms: 300 } });
  await g.page.getByText("Nothing was charged").waitFor({ timeout: 30_000 });
  await checkPage(g, "studio run, failed");
  const after = (await apiAccount(server, person.key!)).account!;
  expect(after.balance_micro).toBe(before.balance_micro);
}
