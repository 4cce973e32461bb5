// Redeem codes end to end in Chromium (issue 16, "Proof"): an operator makes a batch on
// /console/admin/codes (codes shown once: copy, download as text) and with `gengate code create`;
// the account's owner redeems on the billing page (field `Code`, button `Redeem`) -> the notice, the
// balance card and the wallet (source TOPUP) show it, and the API agrees. A bad code shows its error
// next to the field. Every page visited is checked: no off-origin request, no console error or CSP
// violation, no serious or critical axe violation (browser-e2e.ts, checkPage).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { Browser } from "playwright-core";
import {
  describeBrowser,
  type GuardedPage,
  inviteAndSignIn,
  launchBrowser,
  openGuardedPage,
} from "../helpers/browser.ts";
import { runGengate, startServer, type TestServer } from "../helpers/server.ts";
import { apiAccount, checkPage, mainText, showsAmount, visit } from "./browser-e2e.ts";

describeBrowser("redeem codes in the console", () => {
  let server: TestServer;
  let browser: Browser;
  let owner: GuardedPage;
  let operator: GuardedPage;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
    owner = await openGuardedPage(browser, server.url);
    operator = await openGuardedPage(browser, server.url);
  }, 60_000);
  afterAll(async () => {
    await owner?.close();
    await operator?.close();
    await browser?.close();
    server?.cleanup();
  });

  test("operator makes codes, the owner redeems them: balance, wallet (TOPUP) and API agree", async () => {
    const person = await inviteAndSignIn(owner, server);
    const { account } = await apiAccount(server, person.key!);
    expect(account!.currency).toBe("USD");
    expect(account!.balance_micro).toBe("0");

    // The operator's page: `Create codes` -> the read-only `New codes`, a copy button, a download.
    await inviteAndSignIn(operator, server, { operator: true });
    await visit(operator, "/console/admin");
    await operator.page.getByRole("link", { name: "Redeem codes", exact: true }).click();
    await operator.settle();
    expect(new URL(operator.page.url()).pathname).toBe("/console/admin/codes");
    await checkPage(operator, "codes page");
    await operator.page.getByLabel("Amount", { exact: false }).fill("12.5");
    await operator.page.getByLabel("Count", { exact: false }).fill("2");
    await operator.page.getByLabel("Note", { exact: false }).fill("browser test");
    await Promise.all([
      operator.page.waitForEvent("load"),
      operator.page.getByRole("button", { name: "Create codes" }).click(),
    ]);
    await operator.settle();
    const box = operator.page.getByLabel("New codes", { exact: true });
    const codes = (await box.inputValue()).trim().split("\n");
    expect(codes).toHaveLength(2);
    expect(await box.getAttribute("readonly")).not.toBeNull();
    expect(await operator.page.getByRole("button", { name: "Copy", exact: true }).isVisible()).toBe(true);
    const [download] = await Promise.all([
      operator.page.waitForEvent("download"),
      operator.page.getByRole("link", { name: "Download as text" }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^gengate-codes-rbatch_\w+\.txt$/);
    expect(readFileSync((await download.path())!, "utf8")).toBe(`${codes.join("\n")}\n`);
    await checkPage(operator, "codes page with new codes");

    // The owner redeems the first one on the billing page.
    await visit(owner, "/console/billing");
    await owner.page.getByLabel("Code", { exact: true }).fill(codes[0]!.toLowerCase());
    await Promise.all([
      owner.page.waitForEvent("load"),
      owner.page.getByRole("button", { name: "Redeem", exact: true }).click(),
    ]);
    await owner.settle();
    await checkPage(owner, "billing page after redeeming");
    expect(await owner.page.getByRole("status").textContent()).toContain(
      "Code redeemed: 12.50 USD credited. The balance is now 12.50 USD.",
    );
    expect(await showsAmount(owner.page, 12_500_000n, "USD")).toBe(true);
    expect(await owner.page.locator("#balance data").getAttribute("value")).toBe("12500000");

    // The same code again: it says it was already used (not like a typo), next to the field with the
    // code kept as typed; the balance unchanged.
    await owner.page.getByLabel("Code", { exact: true }).fill(codes[0]!);
    await Promise.all([
      owner.page.waitForEvent("load"),
      owner.page.getByRole("button", { name: "Redeem", exact: true }).click(),
    ]);
    await owner.settle();
    await checkPage(owner, "billing page with a redeem error");
    expect(await owner.page.getByRole("alert").textContent()).toContain(
      "This code was already redeemed into this account",
    );
    expect(await owner.page.getByLabel("Code", { exact: true }).getAttribute("aria-invalid")).toBe("true");
    expect(await owner.page.getByLabel("Code", { exact: true }).inputValue()).toBe(codes[0]!);
    expect(await owner.page.locator("#balance data").getAttribute("value")).toBe("12500000");

    // A code from the CLI, redeemed too: 25.00 in all.
    const cli = await runGengate([
      "code",
      "create",
      "--amount",
      "12.5",
      "--currency",
      "USD",
      "--json",
      "--data-dir",
      server.dataDir,
    ]);
    expect(cli.code).toBe(0);
    const cliCode = (JSON.parse(cli.stdout) as { codes: string[] }).codes[0]!;
    await owner.page.getByLabel("Code", { exact: true }).fill(cliCode);
    await Promise.all([
      owner.page.waitForEvent("load"),
      owner.page.getByRole("button", { name: "Redeem", exact: true }).click(),
    ]);
    await owner.settle();
    expect(await owner.page.getByRole("status").textContent()).toContain("The balance is now 25.00 USD.");

    // The wallet shows both credits labelled TOPUP; the API agrees.
    await visit(owner, "/console/wallet");
    const topups = owner.page.locator("tr[data-status=topup]").filter({ hasText: "TOPUP" });
    expect(await topups.count()).toBe(2);
    expect(await topups.first().locator("[data-amount]").getAttribute("data-amount")).toBe("12500000");
    expect(await mainText(owner.page)).toContain("redeem code rbatch_");
    const after = await apiAccount(server, person.key!);
    expect(after.account!.balance_micro).toBe("25000000");

    // The operator's table counts the redemption.
    await visit(operator, "/console/admin/codes");
    const row = operator.page.locator("tr[data-batch]").filter({ hasText: "browser test" });
    expect(await row.locator("td.num").allInnerTexts()).toEqual(["12.50 USD", "2", "1", "1", "0", "0"]);
    owner.assertClean();
    operator.assertClean();
  }, 180_000);
});
