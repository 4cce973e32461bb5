// The wallet's statement and entries views show the session's account only: another account's jobs,
// credits and entries never appear, whatever the cursor or query; members read it as owners do;
// API keys are not console sessions; names and reasons render as text. (The views change nothing,
// so there is no form to forge: signed-out redirects and CSRF are in money-pages-security.test.ts.)
import { describe, expect, test } from "bun:test";
import { consoleApp } from "./helpers.ts";

async function twoAccounts() {
  const t = await consoleApp();
  const { ctx } = t;
  const other = await ctx.accounts.createAccount("other", "USD");
  const theirs = other.account.id;
  await ctx.ledger.topUp(theirs, 9_000_000n, "their secret credit");
  const job = async (accountId: string, request: string, keyId: string | null) =>
    await ctx.ledger.reserve({
      accountId,
      keyId,
      modelId: "sandbox/image",
      requestId: request,
      source: "API",
      quotedUsdMicro: 100_000n,
    });
  await ctx.ledger.settle((await job(theirs, "req_theirs_done", other.keyId)).id, 50_000n);
  await job(theirs, "req_theirs_running", other.keyId);
  await ctx.ledger.topUp(t.account.id, 1_000_000n, "our credit");
  await ctx.ledger.settle((await job(t.account.id, "req_ours", t.keyId)).id, 20_000n);
  await t.person("owner@example.com");
  await t.person("member@example.com", "member");
  return { t, ctx, other };
}

const THEIRS = ["their secret credit", "req_theirs_done", "req_theirs_running"];

describe("wallet isolation and roles", () => {
  test("another account's rows and entries never appear, whatever the cursor or query", async () => {
    const { t, ctx, other } = await twoAccounts();
    const b = await t.signedIn("owner@example.com");
    const theirEntries = (await ctx.wallet.entries(other.account.id, 100, null)).data.map((e) => e.id);
    const top = String(BigInt(theirEntries[0]!) + 1n);
    for (const path of [
      "/console/wallet",
      "/console/wallet/entries",
      `/console/wallet?cursor=${top}`,
      `/console/wallet/entries?cursor=${top}`,
      `/console/wallet?account_id=${other.account.id}`,
      `/console/wallet?account=${other.account.id}&source=API`,
      "/console/wallet?source=ADMIN",
    ]) {
      const { status, text } = await b.page(path);
      expect(status, path).toBe(200);
      for (const s of THEIRS) expect(text, `${path}: ${s}`).not.toContain(s);
      for (const id of theirEntries) {
        expect(text, `${path}: entry ${id}`).not.toContain(`data-entry="${id}"`);
        expect(text, `${path}: row ${id}`).not.toContain(`data-row="${id}"`);
      }
    }
    const ours = await b.page("/console/wallet");
    expect(ours.text).toContain("req_ours");
    expect(ours.text).toContain("our credit");
    const csv = await (await b.get("/console/wallet.csv")).text();
    for (const s of THEIRS) expect(csv).not.toContain(s);
  });

  test("a member reads the same statement as an owner; an API key is not a session", async () => {
    const { t, ctx } = await twoAccounts();
    const owner = await t.signedIn("owner@example.com");
    const member = await t.signedIn("member@example.com");
    const strip = (s: string) => [...s.matchAll(/<tr data-row[\s\S]*?<\/tr>/g)].map((m) => m[0]);
    const mine = await member.page("/console/wallet");
    expect(mine.status).toBe(200);
    expect(strip(mine.text)).toEqual(strip((await owner.page("/console/wallet")).text));
    expect(strip(mine.text)).toHaveLength(2);
    const key = (await ctx.accounts.createKey(t.account.id, { name: "k" })).key;
    for (const path of ["/console/wallet", "/console/wallet/entries"]) {
      const res = await t.handle(path, { headers: { authorization: `Key ${key}` } });
      expect(res.status, path).toBe(303);
      expect(res.headers.get("location"), path).toStartWith("/console/login");
    }
  });

  test("a reason and a model id render as text in the statement", async () => {
    const { t, ctx } = await twoAccounts();
    const EVIL = '<img src=x onerror="alert(1)">';
    await ctx.ledger.topUp(t.account.id, 5n, EVIL);
    const hold = await ctx.ledger.reserve({
      accountId: t.account.id,
      keyId: null,
      modelId: EVIL,
      requestId: null,
      source: "STUDIO",
      quotedUsdMicro: 1n,
    });
    await ctx.ledger.release(hold.id, EVIL);
    const { text } = await (await t.signedIn("owner@example.com")).page("/console/wallet");
    expect(text).not.toContain(EVIL);
    expect(text).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
  });
});
