// A Stripe checkout in Chromium against the local Stripe mock (issue 16, "Proof"): choose an amount on
// the billing page -> `Checkout with Stripe` -> the mock's hosted page -> `Pay` -> the mock sends the
// signed webhook to the server, then sends the browser back -> the return page, the billing page and
// the wallet show exactly one TOPUP credit; sending the webhook again credits nothing.
//
// The off-origin guard stays meaningful: the mock's checkout page is another origin (as Stripe's
// is), so that ONE origin is allowed explicitly (allowOrigins), and the test then requires that the
// only requests to it are the two of the hosted page (GET and POST /pay/<session>) and that every
// other request went to the server; any other off-origin request still fails assertClean().
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
} from "../helpers/browser.ts";
import { startServer, type TestServer, tempDir } from "../helpers/server.ts";
import { type StripeMock, startStripeMock } from "../helpers/stripe-mock.ts";
import { PAYMENT_ENV } from "../payments/helpers.ts";
import { checkPage, mainText, visit } from "./browser-e2e.ts";

describeBrowser("Stripe checkout in the browser", () => {
  let server: TestServer;
  let stripe: StripeMock;
  let browser: Browser;
  let g: GuardedPage;

  beforeAll(async () => {
    stripe = await startStripeMock();
    const config = join(tempDir("gengate-pay-"), "gengate.toml");
    writeFileSync(
      config,
      `[payments.usd]
minimum = "5"
maximum = "500"
presets = ["10", "25"]

[payments.stripe]
secret_key_env = "TEST_STRIPE_SK"
webhook_secret_env = "TEST_STRIPE_WHSEC"
api_base = "${stripe.url}"
checkout_origin = "${stripe.url}"
timeout_seconds = 5
`,
    );
    [server, browser] = await Promise.all([
      startServer({ args: ["--config", config], env: PAYMENT_ENV }),
      launchBrowser(),
    ]);
    stripe.target = `${server.url}/payments/stripe/webhook`;
    g = await openGuardedPage(browser, server.url, { allowOrigins: [stripe.url] });
  }, 60_000);
  afterAll(async () => {
    await g?.close();
    await browser?.close();
    server?.cleanup();
    stripe?.stop();
  });

  test("choose an amount, pay on the mock, credited once; the webhook again credits nothing", async () => {
    await inviteAndSignIn(g, server);
    await visit(g, "/console/billing");

    await g.page.getByRole("radio", { name: "25.00 USD" }).check();
    await g.page.getByRole("button", { name: "Checkout with Stripe" }).click();
    await g.page.waitForURL(`${stripe.url}/pay/**`);
    await g.page.getByRole("button", { name: "Pay" }).click();
    await g.page.waitForURL(`${server.url}/console/billing/return?order=**`);
    await g.settle();
    expect(await mainText(g.page)).toContain("Paid: 25.00 USD was added to your balance.");
    await checkPage(g, "return page");

    // The billing page: the balance and one TOPUP top-up, and the payment with its receipt.
    await visit(g, "/console/billing");
    expect(await g.page.locator("#balance data").getAttribute("value")).toBe("25000000");
    expect(await g.page.locator("#topups tbody tr").count()).toBe(1);
    expect((await g.page.locator("#topups tbody tr td").nth(2).textContent())?.trim()).toBe("TOPUP");
    // The payment's receipt is linked twice, from the payments list and from its top-up: one page.
    const receipts = g.page.getByRole("link", { name: /^Receipt/ });
    expect(await receipts.count()).toBe(2);
    const hrefs = await receipts.evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    expect(new Set(hrefs).size).toBe(1);
    await g.page
      .locator("#topups")
      .getByRole("link", { name: /^Receipt/ })
      .click();
    await g.settle();
    expect(await mainText(g.page)).toContain("Receipt");
    await checkPage(g, "receipt");

    // The same webhook again (Stripe retrying): 200, nothing more credited.
    const session = [...stripe.sessions.values()][0]!;
    const again = stripe.event("checkout.session.completed", session);
    expect((await stripe.send(again.body)).status).toBe(200);
    await visit(g, "/console/wallet");
    const sources = await g.page.locator("#statement > tbody > tr > td:nth-child(3)").allInnerTexts();
    expect(sources.filter((s) => s === "TOPUP")).toHaveLength(1);
    await visit(g, "/console/billing");
    expect(await g.page.locator("#balance data").getAttribute("value")).toBe("25000000");

    // The guard: the only other origin reached is the mock's hosted page, and only its two requests.
    const elsewhere = g.requests.filter((u) => new URL(u).origin !== g.origin);
    expect(elsewhere.map((u) => new URL(u).pathname)).toEqual([`/pay/${session.id}`, `/pay/${session.id}`]);
    expect(elsewhere.every((u) => new URL(u).origin === stripe.url)).toBe(true);
    g.assertClean();
  }, 60_000);
});
