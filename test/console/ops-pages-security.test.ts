import { describe, expect, test } from "bun:test";
import { formatMicro, MAX_BALANCE_MICRO } from "../../src/lib/money.ts";
import { countRows } from "../helpers/backend.ts";
import { json } from "../helpers/context.ts";
import { consoleApp } from "./helpers.ts";

const PAGES = [
  "/console/requests",
  "/console/requests?status=FAILED",
  "/console/requests/01900000-0000-7000-8000-000000000000",
  "/console/admin",
  "/console/admin?q=x",
  "/console/admin/accounts/acct_0000000000000000",
  "/console/admin/people",
  "/console/admin/providers",
  "/console/admin/margins",
  "/console/admin/margins.csv?from=2026-11-01&to=2026-11-30",
  "/console/admin/fx",
  "/console/admin/mail",
  "/console/admin/requests",
  "/console/admin/requests?model=sandbox/image",
  "/console/admin/requests/01900000-0000-7000-8000-000000000000",
  "/console/admin/accounts/acct_0000000000000000/keys/key_00000000000000000000/revoke",
];
const ADMIN_PAGES = PAGES.filter((p) => p.startsWith("/console/admin"));
const ADMIN_ACTIONS = (
  accountId: string,
  keyId = "key_00000000000000000000",
  personId = "person_0000000000000000",
): [string, Record<string, string>][] => [
  ["/console/admin/accounts", { name: "New Co", currency: "USD", email: "boss@example.com" }],
  [`/console/admin/accounts/${accountId}/disable`, { reason: "abuse" }],
  [`/console/admin/accounts/${accountId}/enable`, {}],
  [`/console/admin/accounts/${accountId}/keys/${keyId}/revoke`, {}],
  [`/console/admin/people/${personId}/disable`, { reason: "abuse" }],
  [`/console/admin/people/${personId}/enable`, {}],
  [`/console/admin/accounts/${accountId}/credit`, { amount: "5", reason: "gift" }],
  [`/console/admin/accounts/${accountId}/adjust`, { amount: "5", reason: "gift" }],
  ["/console/admin/invites", { email: "x@example.com", role: "owner", operator: "1" }],
  ["/console/admin/invites/inv_00000000000000000000/revoke", {}],
  ["/console/admin/reset", { email: "op@example.com" }],
  ["/console/admin/fx", { currency: "RUB", rate: "1" }],
];

/** A real person id for the person actions (member@example.com), so a refusal is not a 404. */
async function memberId(c: Awaited<ReturnType<typeof consoleApp>>): Promise<string> {
  return (await c.people.members.findPerson("member@example.com"))!.id;
}

async function setup() {
  const c = await consoleApp();
  await c.ctx.ledger.topUp(c.account.id, 10_000_000n, null);
  await c.person("op@example.com", "owner", true);
  await c.person("owner@example.com", "owner");
  await c.person("member@example.com", "member");
  const signed = async (email: string) => {
    const b = await c.signedIn(email);
    await b.page("/console/requests"); // the CSRF token
    return b;
  };
  const submit = async (key: string, input: Record<string, unknown>) => {
    const res = await c.request("/v1/queue/sandbox/image", {
      method: "POST",
      key,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(input),
    });
    expect(res.status).toBe(202);
    return (await json(res)).request_id as string;
  };
  /** Every money, invite and rate record the admin actions could write. */
  const snapshot = async () => ({
    ledger: await countRows(c.ctx.sql, "ledger_entries"),
    balance: (await c.ctx.accounts.getAccount(c.account.id))!.balance_micro,
    invites: (await c.people.invites.listInvites()).length,
    resets: await countRows(c.ctx.sql, "password_resets"),
    fx: await c.ctx.fx.list(),
    accounts: (await c.ctx.accounts.listAccounts(100, null)).map((a) => [a.id, a.disabled_at]),
    keys: (await c.ctx.accounts.listKeys(c.account.id)).map((k) => [k.id, k.revoked_at]),
    people: (await c.people.members.listPeople()).map((p) => [p.id, p.disabledAt]),
    sessions: await countRows(c.ctx.sql, "sessions WHERE revoked_at IS NULL"),
  });
  return { c, signed, submit, snapshot };
}

describe("access", () => {
  test("signed out: every page is a 303 to sign-in, every action too, and nothing changes", async () => {
    const { c, snapshot } = await setup();
    const guest = c.browser();
    for (const path of PAGES) {
      const res = await guest.get(path);
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toStartWith("/console/login");
    }
    const before = await snapshot();
    for (const [path, form] of ADMIN_ACTIONS(c.account.id, c.keyId, await memberId(c))) {
      const res = await guest.post(path, form, { csrf: null });
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/console/login");
    }
    expect(await snapshot()).toEqual(before);
  });

  test("a member and an owner who is not an operator: 403 on every admin page and action; no Admin link", async () => {
    const { c, signed, snapshot } = await setup();
    for (const email of ["member@example.com", "owner@example.com"]) {
      const b = await signed(email);
      const own = await b.page("/console/requests");
      expect(own.status).toBe(200);
      expect(own.text).not.toContain('href="/console/admin"');
      for (const path of ADMIN_PAGES) {
        const p = await b.page(path);
        expect(p.status).toBe(403);
        expect(p.text).toContain("Only an operator");
      }
      const before = await snapshot();
      for (const [path, form] of ADMIN_ACTIONS(c.account.id, c.keyId, await memberId(c))) {
        const res = await b.post(path, form);
        expect(res.status).toBe(403);
        expect(await res.text()).not.toContain('id="new-link"');
      }
      expect(await snapshot()).toEqual(before);
    }
  });

  test("an operator sees the Admin link and the pages", async () => {
    const { signed } = await setup();
    const b = await signed("op@example.com");
    const p = await b.page("/console/admin");
    expect(p.status).toBe(200);
    expect(p.text).toContain('<a href="/console/admin" aria-current="page">Admin</a>');
  });

  test("another account's request id: 404, and it is not in the list", async () => {
    const { c, signed, submit } = await setup();
    const other = await c.ctx.accounts.createAccount("Other", "USD");
    await c.ctx.ledger.topUp(other.account.id, 10_000_000n, null);
    const theirs = await submit(other.key, { prompt: "secret prompt of another account" });
    const mine = await submit(c.key, { prompt: "mine" });
    for (const email of ["owner@example.com", "member@example.com", "op@example.com"]) {
      const b = await signed(email);
      const res = await b.page(`/console/requests/${theirs}`);
      expect(res.status).toBe(404);
      expect(res.text).not.toContain("secret prompt");
      expect((await b.page(`/console/requests/${mine}`)).status).toBe(200);
      const list = await b.page("/console/requests");
      expect(list.text).toContain(mine);
      expect(list.text).not.toContain(theirs);
      // Filtering by the other account's key shows nothing of theirs.
      const byKey = await b.page(`/console/requests?key=${other.keyId}`);
      expect(byKey.text).not.toContain(theirs);
    }
  });
});

describe("CSRF and Origin on the operator's actions", () => {
  test("a missing or wrong token, or another origin: 403 and nothing changed", async () => {
    const { c, signed, snapshot } = await setup();
    const b = await signed("op@example.com");
    const before = await snapshot();
    for (const [path, form] of ADMIN_ACTIONS(c.account.id, c.keyId, await memberId(c))) {
      const other = `${b.csrf!.slice(0, -1)}${b.csrf!.endsWith("A") ? "B" : "A"}`; // one character off
      for (const csrf of [null, "", other]) {
        const res = await b.post(path, form, { csrf });
        expect(res.status).toBe(403);
        expect(await res.text()).toContain("nothing was changed");
      }
      for (const origin of [null, "https://evil.example", "null", "http://gengate.test:8080"]) {
        const res = await b.post(path, form, { origin });
        expect(res.status).toBe(403);
      }
    }
    expect(await snapshot()).toEqual(before);
    // The same forms with the right token and origin do work (the refusals were not for another reason).
    expect(
      (await b.post(`/console/admin/accounts/${c.account.id}/credit`, { amount: "5", reason: "ok" })).status,
    ).toBe(303);
  });
});

describe("escaping", () => {
  test("a model input containing <script> shows as text in the detail and the list", async () => {
    const { c, signed, submit } = await setup();
    const evil = `<script>alert(1)</script>"'&`;
    await c.ctx.accounts.createKey(c.account.id, { name: "<img src=x onerror=alert(2)>" });
    const id = await submit(c.key, { prompt: evil });
    const b = await signed("owner@example.com");
    const detail = await b.page(`/console/requests/${id}`);
    expect(detail.status).toBe(200);
    expect(detail.text).not.toContain("<script>alert(1)");
    expect(detail.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;\\&quot;&#39;&amp;");
    const list = await b.page("/console/requests");
    expect(list.text).not.toContain("<img src=x");
    expect(list.text).toContain("&lt;img src=x onerror=alert(2)&gt;");
    // A reflected filter value is escaped too.
    const reflected = await b.page(`/console/requests?model=${encodeURIComponent('"><script>x</script>')}`);
    expect(reflected.text).not.toContain("<script>x</script>");
  });

  test("account names, reasons and search text are escaped on the operator pages", async () => {
    const { c, signed } = await setup();
    const acct = (await c.ctx.accounts.createAccount("<b>Evil</b> & Co", "USD")).account;
    await c.ctx.ledger.topUp(acct.id, 1_000_000n, "<script>reason</script>");
    const b = await signed("op@example.com");
    const list = await b.page(`/console/admin?q=${encodeURIComponent("<b>evil")}`);
    expect(list.text).toContain("&lt;b&gt;Evil&lt;/b&gt; &amp; Co");
    expect(list.text).not.toContain("<b>Evil</b>");
    expect(list.text).toContain('value="&lt;b&gt;evil"');
    const detail = await b.page(`/console/admin/accounts/${acct.id}`);
    expect(detail.text).toContain("&lt;script&gt;reason&lt;/script&gt;");
    expect(detail.text).not.toContain("<script>reason");
  });
});

describe("amounts", () => {
  const BAD_CREDIT = [
    "1e3",
    "-0",
    "0",
    "0.0000001",
    "-5",
    "99999999999999999999999999",
    "4611686018427.387905", // one micro-unit above the largest amount
    `1${"0".repeat(5000)}`,
    "NaN",
    "Infinity",
    "0x10",
    "5,00",
    "1 000",
    "",
    ".5",
    "5.",
  ];
  const BAD_ADJUST = BAD_CREDIT.filter((a) => a !== "-5");

  test("refused cleanly (400, a message, the form again) and nothing written", async () => {
    const { c, signed, snapshot } = await setup();
    const b = await signed("op@example.com");
    const before = await snapshot();
    for (const [kind, amounts] of [
      ["credit", BAD_CREDIT],
      ["adjust", BAD_ADJUST],
    ] as const) {
      for (const amount of amounts) {
        const res = await b.post(`/console/admin/accounts/${c.account.id}/${kind}`, {
          amount,
          reason: "test",
        });
        expect(`${kind} ${amount.slice(0, 30)}: ${res.status}`).toBe(`${kind} ${amount.slice(0, 30)}: 400`);
        const text = await res.text();
        expect(text).toContain('role="alert"');
        expect(text).toContain(`action="/console/admin/accounts/${c.account.id}/${kind}"`);
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  test("the largest decimals that are right are taken exactly", async () => {
    const { c, signed } = await setup();
    const b = await signed("op@example.com");
    const res = await b.post(`/console/admin/accounts/${c.account.id}/credit`, {
      amount: "0.000001",
      reason: "one micro",
    });
    expect(res.status).toBe(303);
    expect((await c.ctx.accounts.getAccount(c.account.id))!.balance_micro).toBe(10_000_001n);
  });

  test("a credit or adjustment past the maximum balance: 400, the form naming the limit, nothing written", async () => {
    const { c, signed, snapshot } = await setup();
    await c.ctx.ledger.topUp(c.account.id, MAX_BALANCE_MICRO - 10_000_000n, "to the limit");
    const b = await signed("op@example.com");
    const before = await snapshot();
    for (const kind of ["credit", "adjust"]) {
      const res = await b.post(`/console/admin/accounts/${c.account.id}/${kind}`, {
        amount: "0.000001",
        reason: "one more micro",
      });
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toContain('role="alert"');
      expect(text).toContain(`maximum balance of ${formatMicro(MAX_BALANCE_MICRO)} USD`);
    }
    expect(await snapshot()).toEqual(before);
  });
});
