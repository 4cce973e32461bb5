// The Requests page as an activity log in Chromium, through its own controls, with a slow sandbox
// job and one worker (`[queue] concurrency = { sandbox = 1 }`): a running job and a queued one behind
// it show as badges; `Cancel request` on the queued one cancels it (the wallet and the balance show
// nothing charged for it); the running one's row turns `Succeeded` by itself, without a reload. On a
// request's page the same: `Cancel request`, and a running request's page reloads itself with its
// image once it succeeded. Axe at
// 1280 and 390 px with no serious or critical violation, no request off the origin, and no sideways
// scrolling of the page at 390 px.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import {
  describeBrowser,
  type GuardedPage,
  inviteAndSignIn,
  launchBrowser,
  openGuardedPage,
  overflowsHorizontally,
} from "../helpers/browser.ts";
import { startServer, type TestServer, tempDir } from "../helpers/server.ts";
import { apiAccount, checkPage, credit, visit } from "./browser-e2e.ts";

const SHOTS = process.env.CONSOLE_SHOTS_DIR;
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

describeBrowser("the Requests page as an activity log", () => {
  let server: TestServer;
  let browser: Browser;
  let g: GuardedPage;
  beforeAll(async () => {
    const config = join(tempDir(), "gengate.toml");
    writeFileSync(config, "[queue]\nconcurrency = { sandbox = 1 }\n");
    [server, browser] = await Promise.all([startServer({ args: ["--config", config] }), launchBrowser()]);
    g = await openGuardedPage(browser, server.url);
  }, 60_000);
  afterAll(async () => {
    await g?.close();
    await browser?.close();
    server?.cleanup();
  });

  /** Checks the page at 1280 and at 390 px (axe both; no sideways scrolling at 390), back to 1280. */
  async function bothWidths(label: string): Promise<void> {
    await checkPage(g, `${label} at 1280 px`);
    if (SHOTS)
      await g.page.screenshot({ path: `${SHOTS}/${label.replaceAll(" ", "-")}-1280.png`, fullPage: true });
    await g.page.setViewportSize(PHONE);
    expect(`${label}: ${await overflowsHorizontally(g.page)}`).toBe(`${label}: false`);
    await checkPage(g, `${label} at 390 px`);
    if (SHOTS)
      await g.page.screenshot({ path: `${SHOTS}/${label.replaceAll(" ", "-")}-390.png`, fullPage: true });
    await g.page.setViewportSize(DESKTOP);
  }

  let key = "";
  const submit = async (delayMs: number) => {
    const res = await server.fetch("/v1/queue/sandbox/image", {
      key,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: "slow", sandbox: { delay_ms: delayMs } }),
    });
    expect(res.status).toBe(202);
    return ((await res.json()) as { request_id: string }).request_id;
  };
  const statusOf = async (id: string) =>
    ((await (await server.fetch(`/v1/requests/${id}/status`, { key })).json()) as { status: string }).status;
  const untilRunning = async (id: string) => {
    for (let i = 0; i < 400 && (await statusOf(id)) !== "IN_PROGRESS"; i++) await Bun.sleep(50);
    expect(await statusOf(id)).toBe("IN_PROGRESS");
  };

  test("a running and a queued job, Cancel request, and the running row turning Succeeded by itself", async () => {
    const person = await inviteAndSignIn(g, server);
    key = person.key!;
    const { account } = await apiAccount(server, key);
    await credit(server, account!.id, "1");
    const running = await submit(12_000);
    const queued = await submit(1_000);
    await untilRunning(running);
    expect(await statusOf(queued)).toBe("IN_QUEUE");

    await visit(g, "/console/requests");
    const row = (id: string) => g.page.locator(`#request-${id}`);
    expect(await row(running).locator('[data-status="IN_PROGRESS"]').textContent()).toBe("Running");
    expect(await row(queued).locator('[data-status="IN_QUEUE"]').textContent()).toBe("Queued");
    expect(await row(running).getByRole("button", { name: "Cancel request", exact: true }).count()).toBe(0);
    await bothWidths("requests with a running and a queued job");
    // Every badge's colours in dark mode too (axe's contrast check).
    await g.page.emulateMedia({ colorScheme: "dark" });
    await checkPage(g, "requests in dark mode");
    await g.page.emulateMedia({ colorScheme: "light" });

    // Cancel the queued one: back on the list, which says so; its row is Cancelled.
    await Promise.all([
      g.page.waitForURL(/notice=cancelled/),
      row(queued).getByRole("button", { name: "Cancel request", exact: true }).click(),
    ]);
    await g.settle();
    expect(await g.page.getByRole("status").textContent()).toContain("was cancelled. Nothing was charged");
    expect(await row(queued).locator('[data-status="CANCELLED"]').textContent()).toBe("Cancelled");
    expect(await statusOf(queued)).toBe("CANCELLED");
    await checkPage(g, "requests after the cancel");

    // The running row updates itself: no navigation from here on (a marker on the window survives).
    await g.page.evaluate("window.__sameDocument = true");
    await row(running).locator('[data-status="COMPLETED"]').waitFor({ timeout: 30_000 });
    expect(await row(running).locator(".status").textContent()).toBe("Succeeded");
    expect(await g.page.evaluate("window.__sameDocument === true")).toBe(true);
    expect(await row(running).locator('[data-label="Duration"]').textContent()).not.toContain("so far");
    // Nothing is live any more: the poller stopped.
    expect(await g.page.locator("#requests-live[hx-trigger]").count()).toBe(0);
    await g.settle();
    // The figures are the page's at its load: a reload counts the finished job.
    await g.page.reload();
    await g.settle();
    await bothWidths("requests after the running job succeeded");
    expect(await g.page.locator('dd[data-stat="requests"]').textContent()).toBe("2");
    expect(await g.page.locator('dd[data-stat="error-rate"]').textContent()).toContain(
      "0 failed of 1 finished",
    );

    // The cancelled request's page and the wallet: nothing charged for it; the balance lost only
    // the succeeded job's price (0.01 USD, one image).
    await visit(g, `/console/requests/${queued}`);
    expect(await g.page.getByText("Nothing was charged").count()).toBeGreaterThan(0);
    await bothWidths("a cancelled request");
    await visit(g, "/console/wallet");
    const walletRows = g.page
      .getByRole("row")
      .filter({ has: g.page.locator(`a[href="/console/requests/${queued}"]`) });
    expect(await walletRows.count()).toBeGreaterThan(0);
    for (const text of await walletRows.locator("[data-balance-delta]").allTextContents())
      expect(text.trim()).not.toMatch(/^[-−]/);
    const { account: after } = await apiAccount(server, key);
    expect(after!.balance_micro).toBe(String(1_000_000 - 10_000));
  }, 120_000);
  test("a request's page: Cancel request on a queued one; a running one reloads itself once it succeeds", async () => {
    const running = await submit(6_000);
    const queued = await submit(1_000);
    await untilRunning(running);
    await visit(g, `/console/requests/${queued}`);
    await Promise.all([
      g.page.waitForURL(/notice=cancelled/),
      g.page.getByRole("button", { name: "Cancel request", exact: true }).click(),
    ]);
    await g.settle();
    expect(await g.page.locator("#request-live .status").textContent()).toBe("Cancelled");
    expect(await g.page.getByText("Nothing was charged").count()).toBeGreaterThan(0);
    expect(await statusOf(queued)).toBe("CANCELLED");
    await checkPage(g, "a request cancelled from its page");

    // The running one's page: its status and durations refresh, then the page reloads by itself
    // once it succeeded, and shows the image.
    await visit(g, `/console/requests/${running}`);
    expect(await g.page.locator("#request-live .status").textContent()).toBe("Running");
    await bothWidths("a running request");
    await g.page.getByRole("img", { name: "Output 1 of sandbox/image" }).waitFor({ timeout: 30_000 });
    await g.settle();
    expect(await g.page.locator("#request-live .status").textContent()).toBe("Succeeded");
    expect(await g.page.locator("#request-live[hx-trigger]").count()).toBe(0);
    await checkPage(g, "a request that succeeded while watched");
  }, 120_000);
});
