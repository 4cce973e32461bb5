// /console/requests.csv (issue 36): every request of the account under the Requests list's filters,
// newest first, streamed in keyset pages; the list links to it with its filters.
import { describe, expect, test } from "bun:test";
import { REQUESTS_CSV_HEADER, requestsCsv } from "../../src/queue/requests.ts";
import { csvObjects, csvText, parseCsv } from "../helpers/csv.ts";
import { seedJob } from "../queue/seed-jobs.ts";
import { consoleApp } from "./helpers.ts";

const T0 = Date.parse("2026-03-10T12:00:00Z");

const c = await consoleApp();
const { ctx } = c;
await ctx.ledger.topUp(c.account.id, 100_000_000n, null);
const second = await ctx.accounts.createKey(c.account.id, { name: "=nightly, ci", monthlyLimitMicro: null });
const done = await seedJob(ctx, c.account.id, {
  keyId: c.keyId,
  createdAt: T0,
  status: "COMPLETED",
  queuedMs: 200,
  runMs: 1_300,
  chargeUsdMicro: 700n,
});
const failed = await seedJob(ctx, c.account.id, {
  keyId: second.keyId,
  createdAt: T0 + 86_400_000,
  status: "FAILED",
  queuedMs: 10,
  runMs: 40,
  modelId: "sandbox/video",
});
const studio = await seedJob(ctx, c.account.id, {
  keyId: null,
  source: "STUDIO",
  createdAt: T0 + 2 * 86_400_000,
  status: "COMPLETED",
  queuedMs: 0,
  runMs: 5,
});
const queued = await seedJob(ctx, c.account.id, {
  keyId: c.keyId,
  createdAt: T0 + 3 * 86_400_000,
  status: "IN_QUEUE",
});
await c.person("owner@example.com");
const owner = await c.signedIn("owner@example.com");

const ids = async (query: string) => {
  const res = await owner.get(`/console/requests.csv${query}`);
  expect(res.status, query).toBe(200);
  return csvObjects(await res.text()).map((r) => r.id);
};

describe("requests.csv", () => {
  test("an attachment: the header, every request newest first, the columns an operator reads", async () => {
    const res = await owner.get("/console/requests.csv");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="requests.csv"');
    const text = await res.text();
    expect(parseCsv(text)[0]).toEqual([...REQUESTS_CSV_HEADER]);
    const rows = csvObjects(text);
    expect(rows.map((r) => r.id)).toEqual([queued, studio, failed, done]);
    expect(rows[3]).toEqual({
      id: done,
      created_at: "2026-03-10T12:00:00.000Z",
      completed_at: "2026-03-10T12:00:01.500Z",
      status: "COMPLETED",
      source: "API",
      key_id: c.keyId,
      key_name: (await ctx.accounts.getKey(c.account.id, c.keyId)).name,
      model_id: "sandbox/image",
      duration_ms: "1500",
      price: "0.0007",
      price_micro: "700",
      currency: "USD",
      error_code: "",
    });
    // A failed request: charged nothing, its error code; a key name that would be a formula is text.
    expect(rows[2]).toMatchObject({
      status: "FAILED",
      key_name: "'=nightly, ci",
      model_id: "sandbox/video",
      duration_ms: "50",
      price: "0.00",
      price_micro: "0",
      error_code: "upstream_error",
    });
    // The studio's: no key; a queued one: no end, no duration, no price yet.
    expect(rows[1]).toMatchObject({ source: "STUDIO", key_id: "", key_name: "" });
    expect(rows[0]).toMatchObject({
      status: "IN_QUEUE",
      completed_at: "",
      duration_ms: "",
      price: "",
      price_micro: "",
    });
  });

  test("the list's filters: key, model, status, source, from and to", async () => {
    expect(await ids(`?key=${second.keyId}`)).toEqual([failed]);
    expect(await ids("?model=sandbox/video")).toEqual([failed]);
    expect(await ids("?status=COMPLETED")).toEqual([studio, done]);
    expect(await ids("?source=STUDIO")).toEqual([studio]);
    expect(await ids("?from=2026-03-11&to=2026-03-12")).toEqual([studio, failed]);
    expect(await ids(`?key=${c.keyId}&status=IN_QUEUE`)).toEqual([queued]);
    expect(await ids("?model=none/such")).toEqual([]);
  });

  test("a bad filter is the list's 400 page, not a file", async () => {
    for (const q of ["?status=DONE", "?from=2026-02-30", "?key=nope", "?from=2026-03-12&to=2026-03-11"]) {
      const res = await owner.get(`/console/requests.csv${q}`);
      expect(res.status, q).toBe(400);
      expect(res.headers.get("content-disposition"), q).toBeNull();
      expect(res.headers.get("content-type"), q).toStartWith("text/html");
    }
  });

  test("the Requests page links to the CSV with its filters (not its cursor)", async () => {
    const plain = await owner.page("/console/requests");
    expect(plain.text).toContain('<a href="/console/requests.csv" download>Download CSV</a>');
    const filtered = await owner.page(`/console/requests?status=FAILED&key=${second.keyId}&limit=1`);
    expect(filtered.text).toContain(
      `<a href="/console/requests.csv?key=${second.keyId}&amp;status=FAILED" download>Download CSV</a>`,
    );
  });

  test("a history of several pages: every request once, newest first, one holds read per page", async () => {
    const t = await consoleApp();
    await t.ctx.ledger.topUp(t.account.id, 100_000_000n, null);
    const made: string[] = [];
    for (let i = 0; i < 2_100; i++)
      made.push(
        await seedJob(t.ctx, t.account.id, { keyId: t.keyId, createdAt: T0 + i, status: "IN_QUEUE" }),
      );
    let holdReads = 0;
    const getHolds = t.ctx.ledger.getHolds.bind(t.ctx.ledger);
    t.ctx.ledger.getHolds = async (ids) => {
      holdReads++;
      return await getHolds(ids);
    };
    const rows = csvObjects(await csvText(requestsCsv(t.ctx, t.account.id)));
    expect(rows.map((r) => r.id)).toEqual(made.reverse());
    expect(rows.every((r) => r.currency === "USD" && r.status === "IN_QUEUE")).toBe(true);
    expect(holdReads).toBe(3);
  });
});
