import { describe, expect, test } from "bun:test";
import { admin, type Err } from "../admin/helpers.ts";
import { json } from "../helpers/context.ts";
import { codesApp } from "./helpers.ts";

type Batch = {
  id: string;
  redeemed: number;
  unused: number;
  expired: number;
  revoked: number;
  count: number;
};

describe("admin API: /admin/v1/code-batches", () => {
  test("create (codes in the answer only), list with counts, get, revoke unused", async () => {
    const t = await codesApp();
    const res = await t.request(
      "/admin/v1/code-batches",
      admin("POST", { amount: "2.50", currency: "USD", count: 3, expires_at: "2027-03-01", note: "launch" }),
    );
    expect(res.status).toBe(201);
    const made = await json<{ batch_id: string; codes: string[]; batch: Batch & Record<string, unknown> }>(
      res,
    );
    expect(made.codes).toHaveLength(3);
    expect(made.batch).toMatchObject({
      id: made.batch_id,
      amount_micro: "2500000",
      currency: "USD",
      count: 3,
      note: "launch",
      expires_at: "2027-03-02T00:00:00Z",
      unused: 3,
    });
    await t.codes.redeem(t.account.id, made.codes[0]!, t.keyId);

    const list = await json<{ data: Batch[]; next_cursor: string | null }>(
      await t.request("/admin/v1/code-batches", admin("GET")),
    );
    expect(list.next_cursor).toBeNull();
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({ id: made.batch_id, redeemed: 1, unused: 2, expired: 0, revoked: 0 });
    expect(JSON.stringify(list)).not.toContain(made.codes[1]!);

    const one = await t.request(`/admin/v1/code-batches/${made.batch_id}`, admin("GET"));
    expect((await json<Batch>(one)).redeemed).toBe(1);

    const revoked = await t.request(`/admin/v1/code-batches/${made.batch_id}/revoke`, admin("POST"));
    expect(revoked.status).toBe(200);
    expect(await json(revoked)).toMatchObject({ revoked_now: 2, redeemed: 1, unused: 0, revoked: 2 });
    const again = await t.request(`/admin/v1/code-batches/${made.batch_id}/revoke`, admin("POST"));
    expect((await json(again)).revoked_now).toBe(0);
  });

  test("paging: newest first, next_cursor", async () => {
    const t = await codesApp();
    for (let i = 0; i < 3; i++) await t.batch(String(i + 1));
    const p1 = await json<{ data: Batch[]; next_cursor: string }>(
      await t.request("/admin/v1/code-batches?limit=2", admin("GET")),
    );
    expect(p1.data).toHaveLength(2);
    const p2 = await json<{ data: Batch[]; next_cursor: string | null }>(
      await t.request(`/admin/v1/code-batches?limit=2&cursor=${p1.next_cursor}`, admin("GET")),
    );
    expect(p2.data).toHaveLength(1);
    expect(p2.next_cursor).toBeNull();
    expect(new Set([...p1.data, ...p2.data].map((b) => b.id)).size).toBe(3);
  });

  test("errors: 401 without the token (before the body is looked at), 400 bad bodies, 404 unknown batch", async () => {
    const t = await codesApp();
    const good = { amount: "1", currency: "USD" };
    expect((await t.request("/admin/v1/code-batches", admin("POST", good, null))).status).toBe(401);
    expect(
      (await t.request("/admin/v1/code-batches", admin("POST", { bad: true }, "gat_wrong"))).status,
    ).toBe(401);
    expect((await t.request("/admin/v1/code-batches", admin("GET", undefined, null))).status).toBe(401);
    for (const body of [
      {},
      { ...good, amount: 1 },
      { ...good, amount: "0" },
      { ...good, amount: "abc" },
      { ...good, currency: "EUR" },
      { ...good, count: 0 },
      { ...good, count: 1001 },
      { ...good, count: 1.5 },
      { ...good, expires_at: "2020-01-01" },
      { ...good, expires_at: "soon" },
      { ...good, note: "x".repeat(501) },
      { ...good, extra: true },
    ]) {
      const res = await t.request("/admin/v1/code-batches", admin("POST", body));
      expect(`${JSON.stringify(body)} -> ${res.status}`).toBe(`${JSON.stringify(body)} -> 400`);
      expect((await json<Err>(res)).error.code).toBe("validation_error");
    }
    expect(await t.codes.listBatches()).toEqual([]);
    const missing = await t.request("/admin/v1/code-batches/rbatch_nonexistent00000/revoke", admin("POST"));
    expect(missing.status).toBe(404);
    expect((await t.request("/admin/v1/code-batches/nope", admin("GET"))).status).toBe(400);
    expect((await t.request("/admin/v1/code-batches?limit=0", admin("GET"))).status).toBe(400);
    expect((await t.request("/admin/v1/code-batches?cursor=junk", admin("GET"))).status).toBe(400);
  });

  test("an API key is not the admin token", async () => {
    const t = await codesApp();
    const res = await t.request("/admin/v1/code-batches", {
      ...admin("POST", { amount: "1", currency: "USD" }, t.key),
    });
    expect(res.status).toBe(401);
    expect(await t.codes.listBatches()).toEqual([]);
  });
});
