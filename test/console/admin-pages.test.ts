import { describe, expect, test } from "bun:test";
import { circuitFor } from "../../src/providers/circuit.ts";
import { consoleApp, PASSWORD } from "./helpers.ts";

async function operatorApp() {
  const c = await consoleApp();
  await c.person("op@example.com", "owner", true);
  const b = await c.signedIn("op@example.com");
  await b.page("/console/admin"); // the CSRF token
  const acme = (await c.ctx.accounts.createAccount("Acme Studio", "USD")).account;
  const rub = (await c.ctx.accounts.createAccount("Moscow Lab", "RUB")).account;
  return { c, b, acme, rub };
}

const adminRows = (c: Awaited<ReturnType<typeof consoleApp>>, accountId: string) =>
  c.ctx.sql.all<{ source: string; reason: string | null; balance_delta_micro: bigint }>(
    "SELECT source, reason, balance_delta_micro FROM ledger_entries WHERE account_id = ? ORDER BY id",
    [accountId],
  );

describe("accounts", () => {
  test("the list shows every account with balance, held and available; the nav has Admin", async () => {
    const { c, b, acme } = await operatorApp();
    await c.ctx.ledger.topUp(acme.id, 12_500_000n, null);
    const p = await b.page("/console/admin");
    expect(p.status).toBe(200);
    expect(p.text).toContain('<a href="/console/admin" aria-current="page">Admin</a>');
    expect(p.text).toContain(`<a href="/console/admin/accounts/${acme.id}">Acme Studio</a>`);
    expect(p.text).toContain("Moscow Lab");
    expect(p.text).toContain("12.50 USD");
  });

  test("search by a part of the name (any case) or by the exact id", async () => {
    const { b, acme, rub } = await operatorApp();
    const byName = await b.page("/console/admin?q=acme");
    expect(byName.text).toContain(`href="/console/admin/accounts/${acme.id}"`);
    expect(byName.text).not.toContain("Moscow Lab");
    const byId = await b.page(`/console/admin?q=${rub.id}`);
    expect(byId.text).toContain("Moscow Lab");
    expect(byId.text).not.toContain("Acme Studio");
    const none = await b.page("/console/admin?q=%25");
    expect(none.text).toContain("No accounts match.");
    expect(none.text).not.toContain("Acme Studio");
  });

  test("credit with a reason moves the balance and writes one ADMIN entry with the reason", async () => {
    const { c, b, acme } = await operatorApp();
    const page = await b.page(`/console/admin/accounts/${acme.id}`);
    expect(page.text).toContain('<h2 id="credit-heading">Credit</h2>');
    const res = await b.post(`/console/admin/accounts/${acme.id}/credit`, {
      amount: "25.125",
      reason: "Invoice 42 paid by wire",
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toStartWith(`/console/admin/accounts/${acme.id}?done=`);
    expect((await c.ctx.accounts.getAccount(acme.id))!.balance_micro).toBe(25_125_000n);
    expect(await adminRows(c, acme.id)).toEqual([
      { source: "ADMIN", reason: "Invoice 42 paid by wire", balance_delta_micro: 25_125_000n },
    ]);
    const after = await b.page(res.headers.get("location")!);
    expect(after.text).toContain("Credited 25.125 USD.");
    expect(after.text).toContain("Invoice 42 paid by wire");
    expect(after.text).toContain("25.125 USD");
  });

  test("adjust negative; below what is held: the ledger's message, nothing written", async () => {
    const { c, b, rub } = await operatorApp();
    await c.ctx.ledger.topUp(rub.id, 100_000_000n, null);
    const res = await b.post(`/console/admin/accounts/${rub.id}/adjust`, { amount: "-40", reason: "refund" });
    expect(res.status).toBe(303);
    expect((await c.ctx.accounts.getAccount(rub.id))!.balance_micro).toBe(60_000_000n);
    expect((await adminRows(c, rub.id)).at(-1)).toEqual({
      source: "ADMIN",
      reason: "refund",
      balance_delta_micro: -40_000_000n,
    });
    // Hold 50 RUB-equivalent, then try to take the balance under it.
    await c.ctx.sql.run("UPDATE accounts SET held_micro = 50000000 WHERE id = ?", [rub.id]);
    const before = (await adminRows(c, rub.id)).length;
    const refused = await b.post(`/console/admin/accounts/${rub.id}/adjust`, {
      amount: "-20",
      reason: "too much",
    });
    expect(refused.status).toBe(409);
    const text = await refused.text();
    expect(text).toContain("would leave less than the 50.00 held by open jobs");
    expect(text).toContain('value="-20"'); // the form keeps what was typed
    expect((await adminRows(c, rub.id)).length).toBe(before);
    expect((await c.ctx.accounts.getAccount(rub.id))!.balance_micro).toBe(60_000_000n);
  });

  test("a missing reason: 400 and nothing written, for credit and adjust", async () => {
    const { c, b, acme } = await operatorApp();
    for (const [path, amount] of [
      ["credit", "5"],
      ["adjust", "5"],
    ] as const) {
      for (const reason of ["", "   "]) {
        const res = await b.post(`/console/admin/accounts/${acme.id}/${path}`, { amount, reason });
        expect(res.status).toBe(400);
        expect(await res.text()).toContain("needs a reason");
      }
    }
    expect(await adminRows(c, acme.id)).toEqual([]);
    expect((await c.ctx.accounts.getAccount(acme.id))!.balance_micro).toBe(0n);
  });

  test("an unknown account: 404", async () => {
    const { b } = await operatorApp();
    expect((await b.page("/console/admin/accounts/acct_0000000000000000")).status).toBe(404);
    expect((await b.page("/console/admin/accounts/nope")).status).toBe(404);
    const res = await b.post("/console/admin/accounts/acct_0000000000000000/credit", {
      amount: "1",
      reason: "x",
    });
    expect(res.status).toBe(404);
  });
});

describe("people and invites", () => {
  test("people are listed with memberships and the operator flag", async () => {
    const { c, b } = await operatorApp();
    await c.person("member@example.com", "member");
    const p = await b.page("/console/admin/people");
    expect(p.status).toBe(200);
    expect(p.text).toContain("op@example.com");
    expect(p.text).toContain("member@example.com");
    expect(p.text).toMatch(
      /member@example\.com<\/td>\s*<td><a href="\/console\/admin\/accounts\/acct_[^"]+">[^<]+<\/a> \(member\)<\/td>\s*<td>no<\/td>/,
    );
    expect(p.text).toMatch(/op@example\.com<\/td>\s*<td>.*\(owner\)<\/td>\s*<td>yes<\/td>/);
  });

  test("an invite link is shown once (post/redirect/get) and works: the person sets a password and signs in", async () => {
    const { c, b, acme } = await operatorApp();
    const res = await b.post("/console/admin/invites", {
      email: "new@example.com",
      account: acme.id,
      role: "owner",
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/admin/people?done=invited");
    const { text } = await b.page("/console/admin/people?done=invited");
    const url = /<input id="new-link" type="text" readonly value="([^"]+)"/.exec(text)![1]!;
    expect(url).toStartWith("http://gengate.test/console/invite/");
    expect(text).toContain("shown only once");
    // Listed as pending, never with its link; a reload of the same page shows it no more.
    const list = await b.page("/console/admin/people?done=invited");
    expect(list.text).toContain("pending");
    expect(list.text).not.toContain(url);
    expect(list.text).toContain("It was shown once");
    expect((await c.people.invites.listInvites()).filter((i) => i.email === "new@example.com")).toHaveLength(
      1,
    );
    // The link works.
    const guest = c.browser();
    const path = new URL(url).pathname;
    expect((await guest.page(path)).status).toBe(200);
    const accepted = await guest.post(path, { password: PASSWORD });
    expect(accepted.status).toBeLessThan(400);
    const person = (await c.people.members.findPerson("new@example.com"))!;
    expect(await c.people.members.accountsOf(person.id)).toEqual([
      { accountId: acme.id, name: "Acme Studio", currency: "USD", role: "owner" },
    ]);
  });

  test("invite into a new account, as operator; bad inputs re-show the form with 400/404", async () => {
    const { c, b } = await operatorApp();
    const ok = await b.post("/console/admin/invites", {
      email: "boss@example.com",
      role: "owner",
      operator: "1",
    });
    expect(ok.status).toBe(303);
    const inv = (await c.people.invites.listInvites()).find((i) => i.email === "boss@example.com")!;
    expect(inv).toMatchObject({ accountId: null, operator: true, state: "pending" });
    const cases: [Record<string, string>, number][] = [
      [{ email: "x@example.com", role: "admin" }, 400],
      [{ email: "not an email", role: "member" }, 400],
      [{ email: "", role: "member" }, 400],
      [{ email: "x@example.com", role: "member", account: "acct_<script>" }, 400],
      [{ email: "x@example.com", role: "member", account: "acct_0000000000000000" }, 404],
    ];
    for (const [form, status] of cases) {
      const res = await b.post("/console/admin/invites", form);
      expect(res.status).toBe(status);
      const text = await res.text();
      expect(text).toContain('role="alert"');
      expect(text).not.toContain('id="new-link"');
      expect(text).not.toContain("<script>");
    }
    expect((await c.people.invites.listInvites()).filter((i) => i.email === "x@example.com")).toEqual([]);
  });

  test("revoke an unused invite: it stops working; a used or unknown invite is 404", async () => {
    const { c, b } = await operatorApp();
    const made = await b.post("/console/admin/invites", { email: "late@example.com", role: "member" });
    const shownPage = (await b.page(made.headers.get("location")!)).text;
    const url = /value="(http:\/\/gengate\.test\/console\/invite\/[^"]+)"/.exec(shownPage)![1]!;
    const inv = (await c.people.invites.listInvites()).find((i) => i.email === "late@example.com")!;
    const page = await b.page("/console/admin/people");
    expect(page.text).toContain(`action="/console/admin/invites/${inv.id}/revoke"`);
    const res = await b.post(`/console/admin/invites/${inv.id}/revoke`, {});
    expect(res.status).toBe(303);
    expect((await c.people.invites.getInvite(inv.id))!.state).toBe("revoked");
    expect((await c.browser().page(new URL(url).pathname)).status).toBe(404);
    const used = (await c.people.invites.listInvites()).find((i) => i.email === "op@example.com")!;
    expect(used.state).toBe("used");
    expect(page.text).not.toContain(`/console/admin/invites/${used.id}/revoke`);
    expect((await b.post(`/console/admin/invites/${used.id}/revoke`, {})).status).toBe(404);
    expect((await b.post("/console/admin/invites/inv_00000000000000000000/revoke", {})).status).toBe(404);
    expect((await b.post("/console/admin/invites/x/revoke", {})).status).toBe(404);
  });

  test("a password-reset link for a person, shown once, resets the password", async () => {
    const { c, b } = await operatorApp();
    await c.person("forgetful@example.com", "member");
    const res = await b.post("/console/admin/reset", { email: "forgetful@example.com" });
    expect(res.status).toBe(200);
    const url = /<input id="new-link" type="text" readonly value="([^"]+)"/.exec(await res.text())![1]!;
    expect(url).toStartWith("http://gengate.test/console/reset/");
    const guest = c.browser();
    const path = new URL(url).pathname;
    await guest.page(path);
    const set = await guest.post(path, { password: "a brand new password" });
    expect(set.status).toBe(303);
    const signIn = await c.browser().post("/console/login", {
      email: "forgetful@example.com",
      password: "a brand new password",
    });
    expect(signIn.status).toBe(303);
    const unknown = await b.post("/console/admin/reset", { email: "ghost@example.com" });
    expect(unknown.status).toBe(404);
  });
});

describe("providers and FX", () => {
  test("providers: each configured provider's circuit, recent calls, error rate and median latency", async () => {
    const c = await consoleApp({
      providers: {
        up: { type: "openai", base_url: "http://127.0.0.1:9" },
        down: { type: "openai", base_url: "http://127.0.0.1:9" },
      },
    });
    await c.person("op@example.com", "owner", true);
    const b = await c.signedIn("op@example.com");
    const circuit = circuitFor(c.ctx.circuits, "down");
    for (let i = 0; i < 5; i++) circuit.failure();
    // Recent calls as the circuit's wrapper records them (test/admin/provider-health.test.ts).
    for (const [ok, ms] of [
      [true, 1200],
      [false, 80],
      [true, 2400],
      [false, 10],
    ] as const)
      circuit.stats.record(ok, ms);
    const p = await b.page("/console/admin/providers");
    expect(p.status).toBe(200);
    expect(p.text).toMatch(
      /<td data-label="Provider" class="mono">up<\/td><td data-label="Type">openai<\/td><td data-label="Models" class="num">0<\/td>\s*<td data-label="Circuit">healthy \(closed\)<\/td>\s*<td data-label="Consecutive failures" class="num">0<\/td>/,
    );
    expect(p.text).toMatch(
      /<td data-label="Provider" class="mono">down<\/td>[\s\S]*?<td data-label="Circuit">unhealthy \(open\)<\/td>\s*<td data-label="Consecutive failures" class="num">5<\/td>\s*<td data-label="Calls \(15 min\)" class="num">4<\/td>\s*<td data-label="Error rate" class="num">50\.0%<\/td>\s*<td data-label="Latency p50" class="num">640 ms<\/td>/,
    );
    expect(p.text).toMatch(
      /<td data-label="Calls \(15 min\)" class="num">0<\/td>\s*<td data-label="Error rate" class="num">—<\/td>\s*<td data-label="Latency p50" class="num">—<\/td>/,
    );
  });

  test("FX: set the USD->RUB rate, shown with its source and time; bad rates refused", async () => {
    const { c, b } = await operatorApp();
    const res = await b.post("/console/admin/fx", { currency: "RUB", rate: "92.5" });
    expect(res.status).toBe(303);
    expect(await c.ctx.fx.get("RUB")).toMatchObject({ rate_micro: 92_500_000n, source: "console" });
    const p = await b.page("/console/admin/fx");
    expect(p.text).toMatch(/<td>USD→RUB<\/td><td class="num">92\.50<\/td>\s*<td>console<\/td>/);
    for (const rate of ["", "0", "-1", "1e3", "92.1234567", "abc", "99999999"]) {
      const bad = await b.post("/console/admin/fx", { currency: "RUB", rate });
      expect(bad.status).toBe(400);
    }
    expect((await b.post("/console/admin/fx", { currency: "EUR", rate: "1" })).status).toBe(400);
    expect((await c.ctx.fx.get("RUB"))!.rate_micro).toBe(92_500_000n);
  });
});
