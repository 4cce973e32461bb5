// The money pages (overview, keys, usage, wallet, billing) for a seeded account: the figures they
// show (read exactly from their <data value> elements), creating a key (shown once), changing a
// limit, revoking (the API refuses the key on the very next call), and the CSV downloads.
import { describe, expect, test } from "bun:test";
import { keyFigures, overview } from "../../src/ledger/figures.ts";
import { csvObjects } from "../helpers/csv.ts";
import { consoleApp } from "./helpers.ts";

/** A console app with money: a top-up, charges on two keys and two models, an open hold. */
async function seeded() {
  const clock = { now: Math.floor(Date.now() / 1000) };
  const t = await consoleApp({ now: () => clock.now } as never);
  const { ctx } = t;
  await ctx.ledger.topUp(t.account.id, 50_000_000n, "welcome");
  const second = await ctx.accounts.createKey(t.account.id, { name: "ci", monthlyLimitMicro: 10_000_000n });
  const charge = async (keyId: string, model: string, quote: bigint, actual = quote) => {
    const hold = await ctx.ledger.reserve({
      accountId: t.account.id,
      keyId,
      modelId: model,
      requestId: null,
      source: "API",
      quotedUsdMicro: quote,
    });
    await ctx.ledger.settle(hold.id, actual);
  };
  await charge(t.keyId, "sandbox/image", 1_250_000n);
  await charge(second.keyId, "sandbox/speech", 3_000_000n, 2_000_001n);
  await charge(second.keyId, "sandbox/image", 500_000n);
  await ctx.ledger.reserve({
    accountId: t.account.id,
    keyId: second.keyId,
    modelId: "sandbox/video",
    requestId: null,
    source: "API",
    quotedUsdMicro: 700_000n,
  });
  await t.person("owner@example.com");
  const b = await t.signedIn("owner@example.com");
  return { t, ctx, b, second, clock };
}

/** The micro value of the first <data> inside the element with this id. */
function figure(page: string, id: string): bigint {
  const m = new RegExp(`id="${id}"[\\s\\S]*?<data value="(-?\\d+)">`).exec(page);
  if (!m) throw new Error(`no figure #${id}`);
  return BigInt(m[1]!);
}

describe("overview", () => {
  test("balance, held, available, this month's spend, keys against limits, spend by model", async () => {
    const { t, ctx, b, second } = await seeded();
    const { status, text } = await b.page("/console");
    expect(status).toBe(200);
    const o = await overview(ctx, t.account.id);
    expect(figure(text, "balance")).toBe(o.balance_micro);
    expect(figure(text, "held")).toBe(700_000n);
    expect(figure(text, "available")).toBe(o.balance_micro - 700_000n);
    expect(figure(text, "month-spent")).toBe(1_250_000n + 2_000_001n + 500_000n);
    // The second key: spent 2.500001 of 10.00 (with 0.70 held), a meter and the text: shown as
    // 2.50 (the one display rule), the exact amount in `value` and the CSV.
    const row = new RegExp(`<tr data-key="${second.keyId}">[\\s\\S]*?</tr>`).exec(text)![0];
    expect(row).toContain('<data value="2500001">2.50 USD</data> of <data value="10000000">10.00 USD</data>');
    expect(row).toMatch(/<meter min="0" max="10000000" value="3200001"/);
    expect(row).toContain('<data value="6799999">');
    expect(text).toMatch(/<tr data-model="sandbox\/image">[\s\S]*?<data value="1750000">/);
    expect(text).not.toContain("low-balance");
  });

  test("a notice when the balance is below the alert threshold", async () => {
    const { t, ctx, b } = await seeded();
    await ctx.accounts.setAlertThreshold(t.account.id, 100_000_000n);
    const { text } = await b.page("/console");
    expect(text).toMatch(/id="low-balance"[\s\S]*?<data value="100000000">100.00 USD<\/data>/);
  });
});

describe("keys", () => {
  test("the list shows name, prefix, limit, spent this month, last used, created and state", async () => {
    const { t, ctx, b, second } = await seeded();
    const { text } = await b.page("/console/keys");
    for (const k of await keyFigures(ctx, t.account.id)) {
      const row = new RegExp(`<tr data-key="${k.key_id}">[\\s\\S]*?</tr>`).exec(text)![0];
      expect(row).toContain(`${k.prefix}…`);
      expect(row).toContain(`<data value="${k.spent_micro}">`);
      expect(row).toContain("active");
      expect(row).toContain("Revoke");
    }
    expect(text).toContain(`<data value="10000000">10.00 USD</data>`);
    expect(second.keyId).toBeTruthy();
  });

  test("create: post/redirect/get; the key is shown once in `New key`, works with the API, records who made it", async () => {
    const { t, ctx, b } = await seeded();
    await b.page("/console/keys");
    const res = await b.post("/console/keys", { name: "nightly", monthly_limit: "12.5" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/keys?done=created");
    expect(await res.text()).not.toContain("gk_");
    const shown = await b.page("/console/keys?done=created");
    expect(shown.res.headers.get("cache-control")).toBe("no-store");
    const text = shown.text;
    expect(text).toContain('<label for="new-key">New key</label>');
    const key = /id="new-key" type="text" readonly value="(gk_\w+)"/.exec(text)![1]!;
    const created = (await ctx.accounts.listKeys(t.account.id)).find((k) => k.name === "nightly")!;
    expect(created.monthly_limit_micro).toBe(12_500_000n);
    expect(created.created_by).toBe((await t.people.members.findPerson("owner@example.com"))!.id);
    expect(created.can_manage).toBe(0n);
    expect((await t.request("/v1/account", { key })).status).toBe(200);
    // Shown once: a reload of the same page does not hold it, says so, and created nothing.
    const again = await b.page("/console/keys?done=created");
    expect(again.text).not.toContain(key);
    expect(again.text).not.toContain("New key");
    expect(again.text).toContain("It was shown once");
    expect((await ctx.accounts.listKeys(t.account.id)).filter((k) => k.name === "nightly")).toHaveLength(1);
  });

  test("create without a limit, and bad input re-shows the form with the reason (400)", async () => {
    const { t, ctx, b } = await seeded();
    await b.page("/console/keys");
    expect((await b.post("/console/keys", { name: "open", monthly_limit: "" })).status).toBe(303);
    expect(
      (await ctx.accounts.listKeys(t.account.id)).find((k) => k.name === "open")!.monthly_limit_micro,
    ).toBeNull();
    for (const [name, limit] of [
      ["", "1"],
      ["x".repeat(101), "1"],
      ["ok", "1.0000001"],
      ["ok", "-1"],
      ["ok", "1e3"],
    ] as const) {
      const res = await b.post("/console/keys", { name, monthly_limit: limit });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('role="alert"');
    }
  });

  test("change a limit, and clear it", async () => {
    const { t, ctx, b, second } = await seeded();
    const form = await b.page(`/console/keys/${second.keyId}/edit`);
    expect(form.text).toContain('value="10.00"');
    const res = await b.post(`/console/keys/${second.keyId}/edit`, { monthly_limit: "3.000001" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/keys?done=saved");
    expect((await ctx.accounts.getKey(t.account.id, second.keyId)).monthly_limit_micro).toBe(3_000_001n);
    expect((await b.post(`/console/keys/${second.keyId}/edit`, { monthly_limit: "" })).status).toBe(303);
    expect((await ctx.accounts.getKey(t.account.id, second.keyId)).monthly_limit_micro).toBeNull();
    expect((await b.post(`/console/keys/${second.keyId}/edit`, { monthly_limit: "abc" })).status).toBe(400);
  });

  test("edit every setting, and a refused edit re-shows what was typed", async () => {
    const { t, ctx, b, second } = await seeded();
    await b.page("/console/keys");
    const res = await b.post(`/console/keys/${second.keyId}/edit`, {
      name: "renamed",
      monthly_limit: "4",
      writes_per_minute: "30",
      max_in_flight: "2",
      expires: "2099-01-31",
      expires_was: "",
      allowed_models: "sandbox/image\nsandbox/sp*",
      allowed_addresses: "203.0.113.0/24, 2001:db8::/32",
    });
    expect(res.status).toBe(303);
    const k = await ctx.accounts.getKey(t.account.id, second.keyId);
    expect(k).toMatchObject({
      name: "renamed",
      monthly_limit_micro: 4_000_000n,
      writes_per_minute: 30n,
      max_in_flight: 2n,
      expires_at: BigInt(Date.UTC(2099, 1, 1) / 1000),
      allowed_models: '["sandbox/image","sandbox/sp*"]',
      allowed_cidrs: '["203.0.113.0/24","2001:db8::/32"]',
    });
    // The form shows the last day the key works, and the lists one a line.
    const form = await b.page(`/console/keys/${second.keyId}/edit`);
    expect(form.text).toContain('value="2099-01-31"');
    expect(form.text).toContain("sandbox/image\nsandbox/sp*</textarea>");
    // Saved unchanged, an expiry set through the API keeps its time of day.
    await ctx.accounts.updateKey(t.account.id, second.keyId, { expiresAt: 4_102_444_800n + 3_600n });
    const shownDay = /name="expires_was" value="([^"]*)"/.exec(
      (await b.page(`/console/keys/${second.keyId}/edit`)).text,
    )![1]!;
    expect(
      (await b.post(`/console/keys/${second.keyId}/edit`, { expires: shownDay, expires_was: shownDay }))
        .status,
    ).toBe(303);
    expect((await ctx.accounts.getKey(t.account.id, second.keyId)).expires_at).toBe(4_102_444_800n + 3_600n);
    const refused = await b.post(`/console/keys/${second.keyId}/edit`, {
      name: "x",
      allowed_addresses: "10.0.0.1/8",
    });
    expect(refused.status).toBe(400);
    const text = await refused.text();
    expect(text).toContain("host bits set");
    expect(text).toContain("10.0.0.1/8</textarea>");
    // The refusal names the form's field, not the API's.
    const past = await b.post(`/console/keys/${second.keyId}/edit`, {
      expires: "2001-01-01",
      expires_was: "",
    });
    expect(past.status).toBe(400);
    expect(await past.text()).toContain("Expires is in the past");
    expect((await ctx.accounts.getKey(t.account.id, second.keyId)).name).toBe("renamed");
  });

  test("disable and enable: the API refuses the key in between", async () => {
    const { t, ctx, b } = await seeded();
    const { key, keyId } = await ctx.accounts.createKey(t.account.id, { name: "toggled" });
    expect((await t.request("/v1/account", { key })).status).toBe(200);
    await b.page("/console/keys");
    const off = await b.post(`/console/keys/${keyId}/disable`, {});
    expect(off.headers.get("location")).toBe("/console/keys?done=disabled");
    expect((await t.request("/v1/account", { key })).status).toBe(401);
    const list = await b.page("/console/keys?done=disabled");
    expect(list.text).toMatch(
      new RegExp(`<tr data-key="${keyId}">[\\s\\S]*?disabled[\\s\\S]*?>Enable</button>`),
    );
    expect((await b.post(`/console/keys/${keyId}/enable`, {})).status).toBe(303);
    expect((await t.request("/v1/account", { key })).status).toBe(200);
  });

  test("revoke: confirmation (dialog and page), then the API refuses the key on the very next call", async () => {
    const { t, ctx, b } = await seeded();
    const { key, keyId } = await ctx.accounts.createKey(t.account.id, { name: "doomed" });
    // The key is in the principal cache.
    expect((await t.request("/v1/account", { key })).status).toBe(200);
    const list = await b.page("/console/keys");
    expect(list.text).toContain(`data-dialog="revoke-${keyId}">Revoke</button>`);
    expect(list.text).toMatch(new RegExp(`<dialog id="revoke-${keyId}"[\\s\\S]*?Revoke key</button>`));
    const confirm = await b.page(`/console/keys/${keyId}/revoke`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain(">Revoke key</button>");
    const res = await b.post(`/console/keys/${keyId}/revoke`, {});
    expect(res.status).toBe(303);
    expect((await t.request("/v1/account", { key })).status).toBe(401);
    const after = await b.page("/console/keys?done=revoked");
    expect(new RegExp(`<tr data-key="${keyId}">[\\s\\S]*?revoked[\\s\\S]*?</tr>`).test(after.text)).toBe(
      true,
    );
    expect(after.text).not.toContain(`data-dialog="revoke-${keyId}"`);
  });

  test("the account's last manage key cannot be revoked: the service's message", async () => {
    const { t, b } = await seeded();
    await b.page("/console/keys");
    const res = await b.post(`/console/keys/${t.keyId}/revoke`, {});
    expect(res.status).toBe(409);
    expect(await res.text()).toContain("last key with the manage right");
    expect((await t.request("/v1/account")).status).toBe(200);
  });

  test("a member creates keys and manages their own", async () => {
    const { t, ctx } = await seeded();
    await t.person("member@example.com", "member");
    const m = await t.signedIn("member@example.com");
    await m.page("/console/keys");
    const res = await m.post("/console/keys", { name: "mine", monthly_limit: "1", manage: "1" });
    expect(res.status).toBe(303);
    const mine = (await ctx.accounts.listKeys(t.account.id)).find((k) => k.name === "mine")!;
    expect(mine.can_manage).toBe(0n); // only owners may give the manage right
    expect((await m.post(`/console/keys/${mine.id}/edit`, { monthly_limit: "2" })).status).toBe(303);
    expect((await m.post(`/console/keys/${mine.id}/disable`, {})).status).toBe(303);
    expect((await m.post(`/console/keys/${mine.id}/revoke`, {})).status).toBe(303);
    expect((await ctx.accounts.getKey(t.account.id, mine.id)).revoked_at).not.toBeNull();
  });
});

describe("usage", () => {
  test("per model and per key, per day and per month: chart data and a table of the same figures", async () => {
    const { b, second } = await seeded();
    const day = await b.page("/console/usage");
    expect(day.status).toBe(200);
    expect(day.text).toContain('data-chart="usage-data"');
    expect(day.text).toMatch(/<script type="application\/json" id="usage-data">\{"x":\[/);
    expect(/id="usage-total"><data value="(\d+)">/.exec(day.text)![1]).toBe("3750001");
    const chart = JSON.parse(/id="usage-data">([^<]*)<\/script>/.exec(day.text)![1]!);
    expect(chart.x).toHaveLength(30);
    expect(chart.unit).toBe("USD");
    expect(chart.series.map((s: { label: string }) => s.label).sort()).toEqual([
      "sandbox/image",
      "sandbox/speech",
    ]);
    const byKey = await b.page("/console/usage?by=key&period=month");
    expect(byKey.status).toBe(200);
    expect(byKey.text).toMatch(new RegExp(`<tr data-key="${second.keyId}">[\\s\\S]*?<data value="2500001">`));
    const months = JSON.parse(/id="usage-data">([^<]*)<\/script>/.exec(byKey.text)![1]!);
    expect(months.x).toHaveLength(12);
    expect(months.series.find((s: { label: string }) => s.label === "ci").values.at(-1)).toBe(2.500001);
    expect((await b.get("/console/usage?by=nope")).status).toBe(400);
  });

  test("usage.csv: an attachment that parses and sums to the page's total", async () => {
    const { b } = await seeded();
    const res = await b.get("/console/usage.csv");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="usage-[\d-]+\.csv"$/);
    const rows = csvObjects(await res.text());
    expect(rows.reduce((s, r) => s + BigInt(r.amount_micro!), 0n)).toBe(3_750_001n);
  });
});

describe("wallet and billing", () => {
  test("wallet entries: newest first with the running balance, a source filter, paging, CSV", async () => {
    const { t, ctx, b } = await seeded();
    const { text } = await b.page("/console/wallet/entries");
    const ids = [...text.matchAll(/<tr data-entry="(\d+)">/g)].map((m) => Number(m[1]));
    expect(ids.length).toBeGreaterThan(5);
    expect([...ids].sort((x, y) => y - x)).toEqual(ids);
    const account = (await ctx.accounts.getAccount(t.account.id))!;
    expect(/data-balance-after><data value="(\d+)">/.exec(text)![1]).toBe(String(account.balance_micro));
    const admin = await b.page("/console/wallet/entries?source=ADMIN");
    expect([...admin.text.matchAll(/<tr data-entry=/g)]).toHaveLength(1);
    expect((await b.get("/console/wallet/entries?source=EVIL")).status).toBe(400);
    // Paging: 60 more entries, so an Older link appears and leads to the rest.
    for (let i = 0; i < 60; i++) await ctx.ledger.topUp(t.account.id, 1n, `n${i}`);
    const first = await b.page("/console/wallet/entries");
    const older = /href="(\/console\/wallet\/entries\?cursor=\d+)" rel="next">Older/.exec(first.text)![1]!;
    const second = await b.page(older);
    expect(second.status).toBe(200);
    expect(second.text).toContain("Newest");
    const csv = await b.get("/console/wallet.csv?source=ADMIN");
    expect(csv.headers.get("content-disposition")).toBe('attachment; filename="wallet-ADMIN.csv"');
    const rows = csvObjects(await csv.text());
    expect(rows).toHaveLength(61);
    expect(rows.every((r) => r.source === "ADMIN")).toBe(true);
  });

  test("billing: balance, held, available and the top-ups; no fake payment button", async () => {
    const { t, ctx, b } = await seeded();
    const { status, text } = await b.page("/console/billing");
    expect(status).toBe(200);
    const account = (await ctx.accounts.getAccount(t.account.id))!;
    expect(figure(text, "balance")).toBe(account.balance_micro);
    expect(figure(text, "held")).toBe(account.held_micro);
    expect(figure(text, "available")).toBe(account.balance_micro - account.held_micro);
    expect(text).toMatch(/<table id="topups"[^>]*>[\s\S]*?welcome/);
    expect(text).toContain("ask the operator");
    expect(text).not.toMatch(/<button[^>]*>(Pay|Checkout)/);
    // Redeem codes are real (billing-redeem.test.ts): the form posts to its own route.
    expect(text).toContain('action="/console/billing/redeem"');
  });
});
