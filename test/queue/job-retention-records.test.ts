// What a customer sees of a purged request ([retention] requests_days): its record answers 404
// not_found like an unknown id, the lists no longer show it, and its money is still all there: the
// API's ledger, the console's wallet statement and its CSV answer exactly as before the purge.
import { describe, expect, test } from "bun:test";
import { walletStatement } from "../../src/ledger/statement.ts";
import { consoleApp } from "../console/helpers.ts";
import { json } from "../helpers/context.ts";
import { seedJob } from "./seed-jobs.ts";

const DAY = 86_400_000;

async function seeded() {
  const t = await consoleApp();
  const { ctx } = t;
  await ctx.ledger.topUp(t.account.id, 10_000_000n, "welcome");
  const old = Date.now() - 100 * DAY;
  const job = (createdAt: number, status: "COMPLETED" | "FAILED", charge = 1000n) =>
    seedJob(ctx, t.account.id, { createdAt, runMs: 1000, status, keyId: t.keyId, chargeUsdMicro: charge });
  const purged = [await job(old, "COMPLETED", 700n), await job(old + 1, "FAILED")];
  const kept = await job(Date.now() - DAY, "COMPLETED");
  await t.person("owner@example.com");
  const b = await t.signedIn("owner@example.com");
  return { t, ctx, b, purged, kept };
}

describe("a purged request", () => {
  test("answers 404 not_found like an unknown id, and leaves the lists", async () => {
    const { t, ctx, b, purged, kept } = await seeded();
    expect((await t.request(`/v1/requests/${purged[0]}`)).status).toBe(200);
    expect(await ctx.jobRetention.purgeFinished(Date.now() - 90 * DAY)).toBe(2);

    const unknown = await t.request(`/v1/requests/${Bun.randomUUIDv7()}`);
    for (const id of purged) {
      for (const path of [`/v1/requests/${id}`, `/v1/requests/${id}/status`, `/v1/requests/${id}/response`]) {
        const res = await t.request(path);
        expect(res.status, path).toBe(404);
        expect((await json<{ error: { code: string } }>(res)).error.code, path).toBe("not_found");
      }
      const cancel = await t.request(`/v1/requests/${id}/cancel`, { method: "POST" });
      expect(cancel.status).toBe(404);
      expect((await json<{ error: { code: string } }>(cancel)).error.code).toBe("not_found");
      expect((await b.get(`/console/requests/${id}`)).status).toBe(404);
    }
    expect(unknown.status).toBe(404);
    const list = await json<{ data: { request_id: string }[] }>(await t.request("/v1/requests"));
    expect(list.data.map((r) => r.request_id)).toEqual([kept]);
    const page = await b.page("/console/requests");
    expect(page.status).toBe(200);
    expect(page.text).toContain(kept);
    for (const id of purged) expect(page.text).not.toContain(id);
  });

  test("the ledger, the wallet statement and its CSV, spend and usage answer exactly as before", async () => {
    const { t, ctx, b, purged } = await seeded();
    const read = async () => ({
      ledger: await (await t.request("/v1/account/ledger?limit=100")).text(),
      statement: await walletStatement(ctx, t.account.id),
      wallet: (await b.page("/console/wallet")).text,
      csv: await (await b.get("/console/wallet.csv")).text(),
      entries: (await b.page("/console/wallet/entries")).text,
      // The spend of the month the purged jobs were charged in, and Usage by month (its CSV).
      spend: await (await t.request(`/v1/account/spend?month=${month}`)).text(),
      usage: await (await b.get("/console/usage.csv?period=month")).text(),
    });
    // The ledger's clock is the real one: the seeded jobs were charged this month.
    const month = new Date().toISOString().slice(0, 7);
    const before = await read();
    expect(before.spend).toContain("sandbox/image");
    expect(before.usage).toContain("sandbox/image");
    // The statement has a row for each purged job, linked by its request id.
    for (const id of purged) expect(before.wallet).toContain(`href="/console/requests/${id}"`);
    expect(await ctx.jobRetention.purgeFinished(Date.now() - 90 * DAY)).toBe(2);
    const after = await read();
    expect(after.ledger).toBe(before.ledger);
    expect(after.statement).toEqual(before.statement);
    expect(after.csv).toBe(before.csv);
    expect(after.entries).toBe(before.entries);
    expect(after.spend).toBe(before.spend);
    expect(after.usage).toBe(before.usage);
    // The page itself differs only in its per-render tokens (CSRF, CSP nonce): compare without them.
    const stable = (html: string) => html.replace(/(nonce|value|content)="[A-Za-z0-9_\-+/=]{16,}"/g, '$1=""');
    expect(stable(after.wallet)).toBe(stable(before.wallet));
  });
});
