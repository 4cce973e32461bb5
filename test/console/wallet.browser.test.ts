// The Wallet page as a statement in Chromium (issue 34, defect "the wallet shows three rows per job"):
// a funded account runs a job that succeeds, one that fails and one still running, and redeems a code;
// the wallet shows one row for each job (charged; nothing charged; held, with what is available), the
// redeemed code and the operator's credit as their own rows, and a job's ledger entries when its row is expanded (no script needed: <details>).
// Axe at 1280 and 390 px with no serious or critical finding, no sideways scrolling at 390 px, and no
// request leaving the origin (checkPage).
import { expect, test } from "bun:test";
import { describeBrowser, inviteAndSignIn, openGuardedPage } from "../helpers/browser.ts";
import { apiAccount, browserSession, checkPage, credit, runImage } from "./browser-e2e.ts";

const SHOTS = process.env.CONSOLE_SHOTS_DIR;

describeBrowser("wallet statement", () => {
  const session = browserSession();

  test("one row per job (charged, nothing charged), top-ups as rows, entries one click away", async () => {
    const { server, g } = session;
    const person = await inviteAndSignIn(g, server, { email: "wallet@example.com" });
    const key = person.key!;
    const { account } = await apiAccount(server, key);
    await credit(server, account!.id, "1.00");
    const ok = await runImage(server, key, 2);
    expect(ok.status).toBe(200);
    const failed = await server.fetch("/v1/run/sandbox/image", {
      key,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: "this one fails", sandbox: { fail: true } }),
    });
    expect(failed.status).toBe(502);
    const failedId = ((await failed.json()) as { error: { request_id: string } }).error.request_id;
    // A redeem code (money in labelled TOPUP), made by the operator and redeemed with the key.
    const batch = await fetch(`${server.url}/admin/v1/code-batches`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ amount: "0.50", currency: "USD", count: 1 }),
    });
    expect(batch.status).toBe(201);
    const code = ((await batch.json()) as { codes: string[] }).codes[0]!;
    const redeemed = await server.fetch("/v1/account/redeem", {
      key,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code }),
    });
    expect(redeemed.status).toBe(200);

    // A job still running (queued, slow): held, not spent.
    const running = await server.fetch("/v1/queue/sandbox/image", {
      key,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: "slow", num_images: 3, sandbox: { delay_ms: 600_000 } }),
    });
    expect(running.status).toBe(202);
    const runningId = ((await running.json()) as { request_id: string }).request_id;

    await g.goto("/console/wallet");
    await g.settle();
    const rows = g.page.locator("#statement tbody tr");
    expect(await rows.count()).toBe(5); // the credit, three jobs, the code: not 1 + 2 + 2 + 1 + 1 entries
    const held = g.page.locator("tr[data-status=held]");
    expect(await held.getByRole("link", { name: runningId }).count()).toBe(1);
    expect(await held.locator("[data-amount]").getAttribute("data-amount")).toBe("0");
    expect(await held.locator("[data-amount]").textContent()).toContain("0.03 USD held");
    expect(await held.locator("[data-balance-after]").textContent()).toContain("1.45 USD available");
    const charged = g.page.locator("tr[data-status=charged]");
    const nothing = g.page.locator("tr[data-status=released]");
    expect(await charged.count()).toBe(1);
    expect(await nothing.count()).toBe(1);
    expect(await charged.getByRole("link", { name: ok.requestId! }).getAttribute("href")).toBe(
      `/console/requests/${ok.requestId}`,
    );
    expect(await charged.locator("[data-amount]").getAttribute("data-amount")).toBe("-20000");
    expect(await charged.locator("[data-amount]").textContent()).toContain("-0.02 USD");
    expect(await nothing.getByRole("link", { name: failedId }).count()).toBe(1);
    expect(await nothing.locator("[data-amount]").textContent()).toContain("Nothing charged");
    expect(await g.page.locator("tr[data-status=topup]").filter({ hasText: "TOPUP" }).count()).toBe(1);
    expect(await g.page.locator("tr[data-status=topup]").filter({ hasText: "ADMIN" }).count()).toBe(1);
    // The running balance: the newest row's is the balance (1.00 - 0.02 + 0.50; the hold spends nothing).
    expect(await rows.first().getAttribute("data-status")).toBe("held");
    expect(await rows.first().locator("[data-balance-after] data").first().getAttribute("value")).toBe(
      "1480000",
    );

    // Expanding the charged job's row shows its ledger entries: the hold and the charge.
    const entries = charged.locator("details.entries li");
    expect(await entries.first().isVisible()).toBe(false);
    await charged.locator("details.entries summary").click();
    await entries.first().waitFor({ state: "visible" });
    const texts = await entries.allTextContents();
    expect(texts.map((t) => /(Hold|Charge|Release)/.exec(t)?.[1])).toEqual(["Hold", "Charge"]);
    expect(texts[1]).toContain("-0.02 USD");
    await nothing.locator("details.entries summary").click();
    expect(
      (await nothing.locator("details.entries li").allTextContents()).map(
        (t) => /(Hold|Charge|Release)/.exec(t)?.[1],
      ),
    ).toEqual(["Hold", "Release"]);
    if (SHOTS) await g.page.screenshot({ path: `${SHOTS}/wallet-statement.png`, fullPage: true });
    await checkPage(g, "wallet statement at 1280 px, two rows expanded");

    // The entries view is one click away and has all seven entries.
    await Promise.all([
      g.page.waitForURL(/\/console\/wallet\/entries$/),
      g.page.getByRole("link", { name: "All ledger entries" }).click(),
    ]);
    expect(await g.page.locator("#wallet tbody tr").count()).toBe(7);
    await checkPage(g, "wallet entries");
    // The row's request link leads to the request's detail page.
    await g.goto("/console/wallet");
    await Promise.all([
      g.page.waitForURL(new RegExp(`/console/requests/${ok.requestId}$`)),
      g.page.getByRole("link", { name: ok.requestId! }).click(),
    ]);
    await checkPage(g, "the charged job's request");

    // 390 px: rows stack as labelled cards, nothing scrolls sideways, expanded entries fit too.
    const phone = await openGuardedPage(session.browser, server.url, {
      viewport: { width: 390, height: 844 },
      storageState: await g.context.storageState(),
    });
    try {
      await phone.goto("/console/wallet");
      await phone.settle();
      for (const summary of await phone.page.locator("details.entries summary").all()) await summary.click();
      expect(await phone.page.evaluate("document.documentElement.scrollWidth <= innerWidth")).toBe(true);
      const wide = `[...document.querySelectorAll("main .table-wrap")].map((w) => w.scrollWidth - w.clientWidth).filter((d) => d > 1)`;
      expect(await phone.page.evaluate(wide)).toEqual([]);
      const after = (await phone.page.locator("td[data-balance-after]").first().boundingBox())!;
      expect(after.x + after.width).toBeLessThanOrEqual(390);
      expect(await phone.page.locator("tr[data-status=charged] td[data-label=Amount]").isVisible()).toBe(
        true,
      );
      if (SHOTS) await phone.page.screenshot({ path: `${SHOTS}/wallet-statement-phone.png`, fullPage: true });
      await checkPage(phone, "wallet statement at 390 px, rows expanded");
    } finally {
      await phone.close();
    }
  }, 180_000);
});
