// The billing page's `Redeem a code` section (src/console/billing-redeem-pages.ts): owners redeem with the
// field `Code` and the button `Redeem`; the answer is a redirect back to the page with a notice
// (amount and balance read back from the ledger) or an error next to the field.
import { describe, expect, test } from "bun:test";
import { consoleApp, PASSWORD } from "./helpers.ts";

async function setup() {
  const c = await consoleApp();
  await c.person("owner@example.com", "owner");
  await c.person("member@example.com", "member");
  const owner = await c.signedIn("owner@example.com");
  await owner.page("/console/billing");
  const batch = async (amount = "12.5", currency = "USD", count = 1) =>
    (await c.ctx.codes.createBatchFrom({ amount, currency, count })).codes;
  return { ...c, owner, batch };
}

describe("billing page: redeem a code", () => {
  test("the form: a field named Code, a button Redeem, the CSRF token", async () => {
    const c = await setup();
    const { text, status } = await c.owner.page("/console/billing");
    expect(status).toBe(200);
    expect(text).toContain('<h2 id="redeem-heading">Redeem a code</h2>');
    expect(text).toMatch(/<label for="redeem-code">Code<\/label>\s*<input id="redeem-code" name="code"/);
    expect(text).toContain('<button type="submit">Redeem</button>');
    expect(text).toMatch(
      /<form class="stack" method="post" action="\/console\/billing\/redeem">\s*<input type="hidden" name="csrf"/,
    );
    // Placed right after the balance cards.
    expect(text.indexOf('id="redeem-heading"')).toBeGreaterThan(text.indexOf('id="available"'));
  });

  test("redeem: 303 back to the page, whose notice names the amount and the new balance; the top-ups list it as TOPUP", async () => {
    const c = await setup();
    await c.ctx.ledger.topUp(c.account.id, 5_000_000n, "earlier");
    const [code] = await c.batch("12.5");
    const res = await c.owner.post("/console/billing/redeem", { code: code!.toLowerCase() });
    expect(res.status).toBe(303);
    const location = res.headers.get("location")!;
    expect(location).toMatch(/^\/console\/billing\?redeemed=rcode_[0-9A-Za-z]+#redeem$/);
    expect(location).not.toContain(code!);
    const { text } = await c.owner.page(location.replace("#redeem", ""));
    expect(text).toContain("Code redeemed: 12.50 USD credited. The balance is now 17.50 USD.");
    expect(text).toContain('<data value="17500000">17.50 USD</data>');
    expect(text).toMatch(/<td[^>]*>topup<\/td>\s*<td[^>]*>TOPUP<\/td>/);
    expect((await c.ctx.accounts.getAccount(c.account.id))!.balance_micro).toBe(17_500_000n);
  });

  test("each redeemed code has a printable receipt, for the account's owners only", async () => {
    const c = await setup();
    const [code] = await c.batch("12.5");
    const res = await c.owner.post("/console/billing/redeem", { code: code! });
    const codeId = /redeemed=(rcode_[0-9A-Za-z]+)/.exec(res.headers.get("location")!)![1]!;
    const billing = await c.owner.page("/console/billing");
    expect(billing.text).toContain(`<a href="/console/billing/receipts/${codeId}">Receipt`);
    const receipt = await c.owner.page(`/console/billing/receipts/${codeId}`);
    expect(receipt.status).toBe(200);
    expect(receipt.text).toContain('<h1 id="receipt-heading">Receipt</h1>');
    expect(receipt.text).toContain(`<dt>Redeem code</dt><dd class="mono">${codeId}</dd>`);
    expect(receipt.text).toContain('<data value="12500000">12.50 USD</data>');
    expect(receipt.text).not.toContain(code!);
    // Members see no receipt links and are refused the page; another account and unknown ids are 404.
    const member = await c.signedIn("member@example.com");
    expect((await member.page("/console/billing")).text).not.toContain("/console/billing/receipts/");
    expect((await member.page(`/console/billing/receipts/${codeId}`)).status).toBe(403);
    const other = (await c.ctx.accounts.createAccount("other", "USD")).account;
    const { url } = await c.people.invites.createInvite({
      email: "else@example.com",
      accountId: other.id,
      role: "owner",
    });
    await c.people.signIn.acceptInvite(url.split("/").pop()!, PASSWORD, { ip: null, userAgent: null });
    const stranger = await c.signedIn("else@example.com");
    for (const id of [codeId, "rcode_nope", "rcode_../x", "ord_nope"]) {
      expect((await stranger.page(`/console/billing/receipts/${encodeURIComponent(id)}`)).status).toBe(404);
    }
    // An unused code has no receipt either.
    await c.batch("3");
    const batchCode = (await c.ctx.sql.get<{ id: string }>(
      "SELECT id FROM redeem_codes WHERE redeemed_at IS NULL",
    ))!;
    expect((await c.owner.page(`/console/billing/receipts/${batchCode.id}`)).status).toBe(404);
  });

  test("errors show next to the field, with fixed messages and the code as typed; nothing is credited", async () => {
    const c = await setup();
    const [rub] = await c.batch("1", "RUB");
    const cases: [string, number, string][] = [
      ["AAAAA-AAAAA-AAAAA-AAAAA", 400, "This code is not valid"],
      [rub!, 400, "This code is for another currency; this account is in USD."],
      ["   ", 400, "Enter a code"],
    ];
    for (const [code, status, message] of cases) {
      const res = await c.owner.post("/console/billing/redeem", { code });
      expect(res.status).toBe(status);
      const text = await res.text();
      expect(text).toContain("<h1>Billing</h1>");
      expect(text).toContain(`<p class="notice error" id="redeem-error" role="alert">${message}`);
      expect(text).toContain(
        `value="${code}" aria-describedby="redeem-error redeem-hint" aria-invalid="true"`,
      );
    }
    expect((await c.ctx.accounts.getAccount(c.account.id))!.balance_micro).toBe(0n);
  });

  test("a code this account already redeemed says so (not like a typo); another account's used code does not", async () => {
    const c = await setup();
    const [code, theirs] = await c.batch("1", "USD", 2);
    expect((await c.owner.post("/console/billing/redeem", { code: code! })).status).toBe(303);
    const again = await c.owner.post("/console/billing/redeem", { code: code! });
    expect(again.status).toBe(400);
    const text = await again.text();
    expect(text).toContain("This code was already redeemed into this account");
    expect(text).not.toContain("This code is not valid");
    expect((await c.ctx.codes.store.failures(c.account.id, 0)).count).toBe(0);
    expect((await c.ctx.accounts.getAccount(c.account.id))!.balance_micro).toBe(1_000_000n);
    // Used by another account: the one message for every unusable code (no oracle for a guesser).
    const other = await c.ctx.accounts.createAccount("other", "USD");
    await c.ctx.codes.redeem(other.account.id, theirs!, other.keyId);
    const stranger = await (await c.owner.post("/console/billing/redeem", { code: theirs! })).text();
    expect(stranger).toContain("This code is not valid");
    expect(stranger).not.toContain("already redeemed");
  });

  test("after 5 failures: the throttle message, even for a good code", async () => {
    const c = await setup();
    const [good] = await c.batch("1");
    for (let i = 0; i < 5; i++) await c.owner.post("/console/billing/redeem", { code: `nope${i}` });
    const res = await c.owner.post("/console/billing/redeem", { code: good! });
    expect(res.status).toBe(429);
    expect(await res.text()).toContain("Too many invalid codes for this account");
    expect((await c.ctx.accounts.getAccount(c.account.id))!.balance_micro).toBe(0n);
  });
});

describe("billing page: redeem, security", () => {
  test("members see no form, and their POST is 403 with nothing credited", async () => {
    const c = await setup();
    const member = await c.signedIn("member@example.com");
    const { text } = await member.page("/console/billing");
    expect(text).toContain("Only an owner of this account can redeem codes.");
    expect(text).not.toContain('action="/console/billing/redeem"');
    const [code] = await c.batch("1");
    const res = await member.post("/console/billing/redeem", { code: code! });
    expect(res.status).toBe(403);
    expect((await c.ctx.accounts.getAccount(c.account.id))!.balance_micro).toBe(0n);
    expect((await c.ctx.codes.store.failures(c.account.id, 0)).count).toBe(0);
  });

  test("no CSRF token, a wrong one, another origin, or signed out: nothing redeemed", async () => {
    const c = await setup();
    const [code] = await c.batch("1");
    const attempts = [
      await c.owner.post("/console/billing/redeem", { code: code! }, { csrf: null }),
      await c.owner.post("/console/billing/redeem", { code: code! }, { csrf: "x".repeat(43) }),
      await c.owner.post("/console/billing/redeem", { code: code! }, { origin: "https://evil.example" }),
      await c.owner.post("/console/billing/redeem", { code: code! }, { origin: null }),
    ];
    for (const res of attempts) expect(res.status).toBe(403);
    const anonymous = await c.browser().post("/console/billing/redeem", { code: code! });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toBe("/console/login");
    expect((await c.ctx.accounts.getAccount(c.account.id))!.balance_micro).toBe(0n);
    expect((await c.ctx.codes.store.failures(c.account.id, 0)).count).toBe(0);
    // The same code still works from the page itself.
    expect((await c.owner.post("/console/billing/redeem", { code: code! })).status).toBe(303);
    expect((await c.ctx.accounts.getAccount(c.account.id))!.balance_micro).toBe(1_000_000n);
  });

  test("the notice shows only this account's own credit; URL text is never echoed", async () => {
    const c = await setup();
    const other = await c.ctx.accounts.createAccount("other", "USD");
    const [code] = await c.batch("99");
    const r = await c.ctx.codes.redeem(other.account.id, code!, other.keyId);
    const { text } = await c.owner.page(`/console/billing?redeemed=${r.codeId}`);
    expect(text).not.toContain("Code redeemed");
    const spoof = await c.owner.page("/console/billing?redeem_error=%3Cscript%3Ealert(1)%3C/script%3E");
    expect(spoof.text).not.toContain("<script>alert");
    expect(spoof.text).not.toContain('role="alert"');
  });

  test("a huge or odd code field is refused without a 500", async () => {
    const c = await setup();
    for (const code of ["A".repeat(101), "A".repeat(200_000), "\u0000\u0001", "<b>x</b>"]) {
      const res = await c.owner.post("/console/billing/redeem", { code });
      expect(res.status).toBeLessThan(500);
    }
    expect((await c.ctx.accounts.getAccount(c.account.id))!.balance_micro).toBe(0n);
  });
});
