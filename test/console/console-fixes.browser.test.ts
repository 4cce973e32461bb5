// Issue 34's console defects in Chromium, each through the page's own controls: a refused studio run
// stays on the studio with what was typed and an inline message (a 402 links the billing page), and
// the studio estimate is never stale (an invalid value replaces the price with the reason, by htmx and
// by `Update estimate`). Every page visited is checked (no off-origin request, no console error, axe).
import { expect, test } from "bun:test";
import { formatMoney } from "../../src/console/format.ts";
import { describeBrowser, type GuardedPage, inviteAndSignIn, openGuardedPage } from "../helpers/browser.ts";
import type { TestServer } from "../helpers/server.ts";
import { apiAccount, browserSession, checkPage, credit, runImage } from "./browser-e2e.ts";

const SHOTS = process.env.CONSOLE_SHOTS_DIR;

/** A new person signed in on `g`, their account credited `amount`, then 0.02 spent with their key (2 images). */
async function spender(g: GuardedPage, server: TestServer, email: string, amount: string): Promise<void> {
  const person = await inviteAndSignIn(g, server, { email });
  const { account } = await apiAccount(server, person.key!);
  await credit(server, account!.id, amount);
  expect((await runImage(server, person.key!, 2)).status).toBe(200);
}

describeBrowser("console defects of issue 34", () => {
  const session = browserSession();

  test("a run refused for the balance keeps the input and links the billing page", async () => {
    const { server, g } = session;
    await inviteAndSignIn(g, server);
    await g.goto("/console/studio?model=sandbox/image");
    await g.page.getByLabel("Prompt", { exact: true }).fill("a red fox in the snow");
    await g.page.getByLabel("Num images", { exact: true }).fill("2");
    const [answer] = await Promise.all([
      g.page.waitForResponse((r) => r.url().endsWith("/console/studio/run")),
      g.page.getByRole("button", { name: "Run", exact: true }).click(),
    ]);
    await g.settle();
    expect(answer.status()).toBe(402);
    expect(await g.page.getByLabel("Prompt", { exact: true }).inputValue()).toBe("a red fox in the snow");
    expect(await g.page.getByLabel("Num images", { exact: true }).inputValue()).toBe("2");
    expect(await g.page.getByRole("heading", { level: 1 }).textContent()).toBe("Studio");
    const notice = g.page.locator("#studio-refusal");
    expect(await notice.textContent()).toContain("nothing was charged");
    const link = notice.getByRole("link", { name: "Add money on the billing page" });
    expect(await link.getAttribute("href")).toBe("/console/billing");
    expect(await g.page.getByText("That did not work").count()).toBe(0);
    if (SHOTS) await g.page.screenshot({ path: `${SHOTS}/studio-402.png`, fullPage: true });
    await checkPage(g, "studio, run refused for the balance");
    await Promise.all([g.page.waitForURL(/\/console\/billing$/), link.click()]);
    await checkPage(g, "billing, from the refused run");
  }, 120_000);

  test("the estimate is never stale: 40 images shows why, by htmx and by Update estimate", async () => {
    const { g } = session;
    await g.goto("/console/studio?model=sandbox/image");
    await g.page.getByLabel("Prompt", { exact: true }).fill("four cats");
    const box = g.page.locator("#studio-estimate-box");
    await g.page.getByLabel("Num images", { exact: true }).fill("4");
    await g.page
      .getByLabel("Estimate", { exact: true })
      .filter({ hasText: formatMoney(40_000n, "USD") })
      .waitFor({ timeout: 15_000 });
    // htmx: typing 40 (over the max of 4) replaces the price with the reason.
    await g.page.getByLabel("Num images", { exact: true }).fill("40");
    await box.getByRole("alert").waitFor({ timeout: 15_000 });
    expect(await box.textContent()).not.toContain(formatMoney(40_000n, "USD"));
    expect(await box.getByRole("alert").textContent()).toMatch(/num_images|at most|4/);
    await g.settle();
    if (SHOTS) await g.page.screenshot({ path: `${SHOTS}/studio-estimate-invalid.png`, fullPage: true });
    await checkPage(g, "studio, estimate of an invalid form");
    // Without htmx: Update estimate posts the whole form; the page answers with the reason.
    await g.goto("/console/studio?model=sandbox/image");
    await g.page.getByLabel("Num images", { exact: true }).fill("40");
    await Promise.all([
      g.page.waitForResponse(
        (r) => r.url().endsWith("/console/studio/estimate") && r.request().isNavigationRequest(),
      ),
      g.page.getByRole("button", { name: "Update estimate", exact: true }).click(),
    ]);
    await g.settle();
    expect(await g.page.getByLabel("Num images", { exact: true }).inputValue()).toBe("40");
    expect(await box.getByRole("alert").count()).toBe(1);
    expect(await box.textContent()).not.toMatch(/\(\d+ images?\)/);
    await checkPage(g, "studio, Update estimate of an invalid form");
  }, 120_000);

  test("the Overview adds up (keys plus a Studio row equal Spent); no money shows how to add some", async () => {
    const { server, browser } = session;
    const g = await openGuardedPage(browser, server.url);
    try {
      const person = await inviteAndSignIn(g, server, { email: "overview@example.com" });
      await g.goto("/console");
      const add = g.page.locator("#add-money");
      expect(
        await add.getByRole("link", { name: "Add money on the Billing page" }).getAttribute("href"),
      ).toBe("/console/billing");
      await checkPage(g, "overview of a new account");
      const { account } = await apiAccount(server, person.key!);
      await credit(server, account!.id, "1.00");
      expect((await runImage(server, person.key!, 2)).status).toBe(200);
      await g.goto("/console/studio?model=sandbox/image");
      await g.page.getByLabel("Prompt", { exact: true }).fill("a studio run");
      await g.page.getByLabel("Num images", { exact: true }).fill("3");
      await Promise.all([
        g.page.waitForURL(/\/console\/studio\/runs\//),
        g.page.getByRole("button", { name: "Run", exact: true }).click(),
      ]);
      await g.page.getByRole("img", { name: "Output 3 of sandbox/image" }).waitFor({ timeout: 30_000 });
      await g.goto("/console");
      expect(await add.count()).toBe(0);
      const spent = BigInt((await g.page.locator("#month-spent data").getAttribute("value"))!);
      const rows = (await g.page.evaluate(
        `[...document.querySelectorAll("#key-spend tbody tr")].map((r) => [r.dataset.key, r.querySelector("td[data-spent] data").getAttribute("value")])`,
      )) as [string, string][];
      expect(rows.find(([k]) => k === "studio")?.[1]).toBe("30000");
      expect(rows.reduce((n, [, v]) => n + BigInt(v), 0n)).toBe(spent);
      expect(spent).toBe(50_000n);
      if (SHOTS) await g.page.screenshot({ path: `${SHOTS}/overview-studio.png`, fullPage: true });
      await checkPage(g, "overview with key and studio spend");
    } finally {
      await g.close();
    }
  }, 120_000);

  test("the revoke dialog focuses Cancel; two-factor set-up keeps its secret; sessions read as browser and system", async () => {
    const { server, browser } = session;
    const g = await openGuardedPage(browser, server.url);
    try {
      await inviteAndSignIn(g, server, { email: "small@example.com" });
      await g.goto("/console/keys");
      await g.page.getByRole("button", { name: "Revoke", exact: true }).first().click();
      await g.page.getByRole("dialog").waitFor();
      expect(await g.page.evaluate("document.activeElement.textContent.trim()")).toBe("Cancel");
      await checkPage(g, "keys, revoke dialog open");
      await g.page.keyboard.press("Escape");

      await g.goto("/console/settings/security");
      await g.page.getByRole("button", { name: "Set up two-factor", exact: true }).click();
      const secret = g.page.locator("#totp-secret");
      await secret.waitFor();
      const first = await secret.textContent();
      await g.goto("/console");
      await g.goto("/console/settings/security");
      expect(await secret.textContent()).toBe(first);
      await checkPage(g, "security, set-up shown again");
      await g.page.getByRole("button", { name: "Cancel set-up", exact: true }).click();
      await g.page.getByText("Two-factor set-up is cancelled").waitFor();
      expect(await secret.count()).toBe(0);
      // This browser's own session: Chromium on Linux, in words (the raw string only as a title).
      const cell = g.page.locator("#main td[title]").first();
      expect(await cell.textContent()).toMatch(/^(Headless )?Chrome \d+ on Linux$/);
      if (SHOTS) await g.page.screenshot({ path: `${SHOTS}/security.png`, fullPage: true });
      await checkPage(g, "security, set-up cancelled");
    } finally {
      await g.close();
    }
  }, 120_000);

  test("the usage chart names its unit and its legend reads the day, not 'Time: --'", async () => {
    const { server, browser } = session;
    const g = await openGuardedPage(browser, server.url);
    try {
      await spender(g, server, "usage@example.com", "1.00");
      await g.goto("/console/usage");
      const chart = g.page.locator("[data-chart]");
      expect(await chart.getAttribute("aria-label")).toContain("spend in USD");
      const legend = g.page.locator(".u-legend");
      await legend.waitFor();
      const text = (await legend.textContent()) ?? "";
      expect(text).not.toContain("Time");
      expect(text).not.toContain("--");
      expect(text).toContain("Day");
      // Under the cursor: the day as the table writes it, the value with its currency.
      const box = (await g.page.locator(".u-over").boundingBox())!;
      await g.page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
      const today = new Date().toISOString().slice(0, 10);
      await legend.filter({ hasText: today }).waitFor({ timeout: 5_000 });
      expect(await legend.textContent()).toContain("0.02 USD");
      if (SHOTS) await g.page.screenshot({ path: `${SHOTS}/usage.png`, fullPage: true });
      await checkPage(g, "usage with the chart");
    } finally {
      await g.close();
    }
  }, 120_000);

  test("money has one display rule: 24.330804 reads 24.33 USD beside 0.02 USD, exact in value", async () => {
    const { server, browser } = session;
    const g = await openGuardedPage(browser, server.url);
    try {
      await spender(g, server, "money@example.com", "24.350804");
      for (const path of ["/console", "/console/billing", "/console/wallet"]) {
        await g.goto(path);
        const balance = g.page.locator("main data[value='24330804']").first();
        expect(`${path}: ${await balance.textContent()}`).toBe(`${path}: 24.33 USD`);
        expect(await g.page.locator("main").textContent()).not.toContain("24.330804");
      }
      await checkPage(g, "wallet, amounts by the display rule");
    } finally {
      await g.close();
    }
  }, 120_000);

  test("Requests and Wallet tables fit: stacked rows at 390 px, the wallet inside its 1120 px column", async () => {
    const { server, browser } = session;
    // Every table's box needs no sideways scrolling: its table is no wider than the box.
    const fits = `[...document.querySelectorAll("main .table-wrap")].map((w) => w.scrollWidth - w.clientWidth).filter((d) => d > 1)`;
    for (const viewport of [
      { width: 390, height: 844 },
      { width: 1280, height: 800 },
    ]) {
      const g = await openGuardedPage(browser, server.url, { viewport });
      try {
        await spender(g, server, `tables-${viewport.width}@example.com`, "1.00");
        for (const path of ["/console/requests", "/console/wallet"]) {
          await g.goto(path);
          expect(`${viewport.width} ${path}: ${await g.page.evaluate(fits)}`).toBe(
            `${viewport.width} ${path}: `,
          );
          expect(await g.page.evaluate("document.documentElement.scrollWidth <= innerWidth")).toBe(true);
          // The price (requests) and the running balance (wallet) are on screen, not off to the right.
          const cell = g.page.locator(
            path.endsWith("requests") ? "td[data-label=Price]" : "td[data-balance-after]",
          );
          const box = (await cell.first().boundingBox())!;
          expect(box.x + box.width).toBeLessThanOrEqual(viewport.width);
          await checkPage(g, `${path} at ${viewport.width} px`);
        }
      } finally {
        await g.close();
      }
    }
  }, 120_000);
});
