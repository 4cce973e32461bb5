// The money pages' security: signed out -> sign-in, CSRF and Origin on every change, another
// account's key is 404, a member cannot touch an owner's key, names render as text (HTML, chart
// JSON) and CSV cells cannot become formulas.
import { describe, expect, test } from "bun:test";
import { csvObjects } from "../helpers/csv.ts";
import { consoleApp } from "./helpers.ts";

const PAGES = [
  "/console",
  "/console/keys",
  "/console/usage",
  "/console/usage?by=key&period=month",
  "/console/usage.csv",
  "/console/wallet",
  "/console/wallet/entries",
  "/console/wallet.csv",
  "/console/billing",
];

async function setup() {
  const t = await consoleApp();
  await t.person("owner@example.com");
  const b = await t.signedIn("owner@example.com");
  await b.page("/console/keys");
  const { keyId, key } = await t.ctx.accounts.createKey(t.account.id, {
    name: "spare",
    monthlyLimitMicro: 5n,
  });
  return { t, b, keyId, key };
}

const actions = (keyId: string): [string, Record<string, string>][] => [
  ["/console/keys", { name: "new", monthly_limit: "1" }],
  [`/console/keys/${keyId}/edit`, { monthly_limit: "9" }],
  [`/console/keys/${keyId}/disable`, {}],
  [`/console/keys/${keyId}/enable`, {}],
  [`/console/keys/${keyId}/revoke`, {}],
];

describe("signed out", () => {
  test("every page and CSV sends a signed-out visitor to sign-in (303)", async () => {
    const { t, keyId } = await setup();
    const anon = t.browser();
    for (const path of [...PAGES, `/console/keys/${keyId}/edit`, `/console/keys/${keyId}/revoke`]) {
      const res = await anon.get(path);
      expect(res.status, path).toBe(303);
      expect(res.headers.get("location"), path).toStartWith("/console/login");
      expect(res.headers.get("content-disposition"), path).toBeNull();
    }
  });

  test("every action is refused without a session, and nothing changes", async () => {
    const { t, keyId } = await setup();
    const anon = t.browser();
    for (const [path, fields] of actions(keyId)) {
      const res = await anon.post(path, fields, { csrf: null });
      expect(res.status, path).toBe(303);
      expect(res.headers.get("location")).toBe("/console/login");
    }
    const key = await t.ctx.accounts.getKey(t.account.id, keyId);
    expect(key.revoked_at).toBeNull();
    expect(key.monthly_limit_micro).toBe(5n);
    expect(key.disabled_at).toBeNull();
    expect((await t.ctx.accounts.listKeys(t.account.id)).some((k) => k.name === "new")).toBe(false);
  });
});

describe("CSRF and Origin", () => {
  test("a missing or wrong CSRF token, or another Origin, is 403 and changes nothing", async () => {
    const { t, b, keyId, key } = await setup();
    const before = (await t.ctx.accounts.listKeys(t.account.id)).length;
    for (const [path, fields] of actions(keyId)) {
      for (const options of [
        { csrf: null },
        { csrf: "wrong-token-wrong-token-wrong-token" },
        { origin: "https://evil.example" },
        { origin: null },
      ]) {
        const res = await b.post(path, fields, options);
        expect(res.status, `${path} ${JSON.stringify(options)}`).toBe(403);
        expect(await res.text()).not.toContain("New key");
      }
    }
    expect(await t.ctx.accounts.listKeys(t.account.id)).toHaveLength(before);
    const k = await t.ctx.accounts.getKey(t.account.id, keyId);
    expect(k.revoked_at).toBeNull();
    expect(k.monthly_limit_micro).toBe(5n);
    expect(k.disabled_at).toBeNull();
    expect((await t.request("/v1/account", { key })).status).toBe(200);
  });

  test("a new key is shown only to the session that created it, once", async () => {
    const { t, b } = await setup();
    const other = await t.signedIn("owner@example.com"); // the same person, another session
    await other.page("/console/keys");
    const res = await b.post("/console/keys", { name: "mine-only", monthly_limit: "" });
    expect(res.status).toBe(303);
    expect((await other.page("/console/keys?done=created")).text).not.toContain('id="new-key"');
    const mine = await b.page("/console/keys?done=created");
    expect(mine.text).toContain('id="new-key"');
    expect((await b.page("/console/keys?done=created")).text).not.toContain('id="new-key"');
  });

  test("console routes ignore API keys", async () => {
    const { t, key } = await setup();
    const res = await t.handle("/console/keys", { headers: { authorization: `Key ${key}` } });
    expect(res.status).toBe(303);
  });
});

describe("other accounts and roles", () => {
  test("another account's key id is 404 on every key route, and it stays untouched", async () => {
    const { t, b } = await setup();
    const other = await t.ctx.accounts.createAccount("other", "USD");
    const theirs = await t.ctx.accounts.createKey(other.account.id, { name: "theirs" });
    for (const path of [`/console/keys/${theirs.keyId}/edit`, `/console/keys/${theirs.keyId}/revoke`]) {
      expect((await b.get(path)).status, path).toBe(404);
    }
    for (const [path, fields] of actions(theirs.keyId).slice(1)) {
      expect((await b.post(path, fields)).status, path).toBe(404);
    }
    expect((await b.get("/console/keys/not-a-key/revoke")).status).toBe(404);
    expect((await t.ctx.accounts.getKey(other.account.id, theirs.keyId)).revoked_at).toBeNull();
    expect((await t.ctx.accounts.getKey(other.account.id, theirs.keyId)).disabled_at).toBeNull();
    expect((await t.request("/v1/account", { key: theirs.key })).status).toBe(200);
    // Pages show only the session's account.
    const keys = await b.page("/console/keys");
    expect(keys.text).not.toContain(theirs.keyId);
  });

  test("a member cannot change or revoke an owner's key (403), and sees no buttons for it", async () => {
    const { t, keyId, key } = await setup();
    await t.person("member@example.com", "member");
    const m = await t.signedIn("member@example.com");
    const list = await m.page("/console/keys");
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(`data-dialog="revoke-${keyId}"`);
    expect(list.text).not.toContain('name="manage"');
    expect((await m.get(`/console/keys/${keyId}/revoke`)).status).toBe(403);
    expect((await m.post(`/console/keys/${keyId}/revoke`, {})).status).toBe(403);
    expect((await m.post(`/console/keys/${keyId}/edit`, { monthly_limit: "100" })).status).toBe(403);
    expect((await m.post(`/console/keys/${keyId}/edit`, { allowed_models: "" })).status).toBe(403);
    expect((await m.post(`/console/keys/${keyId}/disable`, {})).status).toBe(403);
    expect(list.text).not.toContain(`/console/keys/${keyId}/disable`);
    expect((await t.request("/v1/account", { key })).status).toBe(200);
    expect((await t.ctx.accounts.getKey(t.account.id, keyId)).monthly_limit_micro).toBe(5n);
  });
});

describe("escaping", () => {
  const EVIL = "<script>alert(1)</script>";

  test("a key named <script>alert(1)</script> shows as text on every page and in the chart data", async () => {
    const { t, b } = await setup();
    const evil = await t.ctx.accounts.createKey(t.account.id, { name: EVIL });
    const hold = await t.ctx.ledger.reserve({
      accountId: t.account.id,
      keyId: evil.keyId,
      modelId: "sandbox/image",
      requestId: null,
      source: "API",
      quotedUsdMicro: 0n,
    });
    await t.ctx.ledger.topUp(t.account.id, 10_000_000n, EVIL);
    await t.ctx.ledger.settle(hold.id, 0n);
    const created = await b.post("/console/keys", { name: EVIL, monthly_limit: "" });
    expect(created.status).toBe(303);
    // The page the redirect leads to shows the new key's name once (the flash).
    const pages = [b.page("/console/keys?done=created").then((r) => r.text)];
    for (const p of [
      "/console",
      "/console/keys",
      "/console/usage?by=key",
      "/console/wallet",
      "/console/wallet/entries",
      "/console/billing",
    ]) {
      pages.push(b.page(p).then((r) => r.text));
    }
    for (const text of await Promise.all(pages)) {
      expect(text).not.toContain(EVIL);
      expect(text.includes("&lt;script&gt;alert(1)&lt;/script&gt;") || text.includes("\\u003cscript")).toBe(
        true,
      );
    }
  });

  test("CSV cells that start like a formula are neutralised", async () => {
    const { t, b } = await setup();
    const bad = await t.ctx.accounts.createKey(t.account.id, { name: '=HYPERLINK("http://x")' });
    await t.ctx.ledger.topUp(t.account.id, 10_000_000n, "@SUM(1)");
    const hold = await t.ctx.ledger.reserve({
      accountId: t.account.id,
      keyId: bad.keyId,
      modelId: "sandbox/image",
      requestId: null,
      source: "API",
      quotedUsdMicro: 1_000n,
    });
    await t.ctx.ledger.settle(hold.id, 1_000n);
    const usage = csvObjects(await (await b.get("/console/usage.csv")).text());
    expect(usage.find((r) => r.key_id === bad.keyId)!.key_name).toBe('\'=HYPERLINK("http://x")');
    const wallet = csvObjects(await (await b.get("/console/wallet.csv")).text());
    expect(wallet.find((r) => r.kind === "topup")!.reason).toBe("'@SUM(1)");
  });
});
