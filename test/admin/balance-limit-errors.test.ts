// The maximum balance (MAX_BALANCE_MICRO, 10^18 micro-units: docs/money.md "The maximum balance")
// on the operator's API. Before it, a credit past the balance column's 64-bit range was a 500
// internal_error on both databases (SQLite: SQLITE_CONSTRAINT_DATATYPE, the sum became a REAL;
// PostgreSQL: bigint out of range). Run on PostgreSQL by scripts/test-postgres.
import { describe, expect, test } from "bun:test";
import { formatMicro, MAX_BALANCE_MICRO } from "../../src/lib/money.ts";
import { countRows } from "../helpers/backend.ts";
import { json, makeTestApp } from "../helpers/context.ts";
import { admin, type Err } from "./helpers.ts";

const MAX = formatMicro(MAX_BALANCE_MICRO); // "1000000000000.00"
const LIMIT_ERROR = {
  code: "validation_error",
  type: "invalid_request_error",
  param: "amount",
  max_balance_micro: MAX_BALANCE_MICRO.toString(),
};

async function atTheLimit() {
  const t = await makeTestApp();
  const id = t.account.id;
  const full = await t.request(
    `/admin/v1/accounts/${id}/credit`,
    admin("POST", { amount: MAX, reason: "full" }),
  );
  expect(full.status).toBe(200);
  expect((await json(full)).balance_micro).toBe(MAX_BALANCE_MICRO.toString());
  const entries = () => countRows(t.ctx.sql, "ledger_entries WHERE account_id = ?", [id]);
  return { t, id, entries, before: await entries() };
}

describe("the maximum balance on the admin API", () => {
  test("a credit that would pass it: 400 naming the limit, nothing written", async () => {
    const { t, id, entries, before } = await atTheLimit();
    // The largest amount the API parses (MAX_MICRO), twice: before the limit, the second was a 500.
    for (const amount of ["0.000001", "4611686018427.387904", "4611686018427.387904"]) {
      const res = await t.request(
        `/admin/v1/accounts/${id}/credit`,
        admin("POST", { amount, reason: "more" }),
      );
      expect(res.status).toBe(400);
      const e = (await json<Err>(res)).error;
      expect(e).toMatchObject(LIMIT_ERROR);
      expect(e.message).toContain(`maximum balance of ${MAX} USD`);
    }
    expect(await entries()).toBe(before);
    expect((await t.ctx.accounts.getAccount(id))!.balance_micro).toBe(MAX_BALANCE_MICRO);
  });

  test("a positive adjustment that would pass it: 400 naming the limit; a negative one still works", async () => {
    const { t, id, entries, before } = await atTheLimit();
    const res = await t.request(
      `/admin/v1/accounts/${id}/adjust`,
      admin("POST", { amount: "1", reason: "more" }),
    );
    expect(res.status).toBe(400);
    expect((await json<Err>(res)).error).toMatchObject(LIMIT_ERROR);
    expect(await entries()).toBe(before);
    const down = await t.request(
      `/admin/v1/accounts/${id}/adjust`,
      admin("POST", { amount: "-1", reason: "less" }),
    );
    expect(down.status).toBe(200);
    // Exactly up to the limit again is allowed.
    const up = await t.request(
      `/admin/v1/accounts/${id}/adjust`,
      admin("POST", { amount: "1", reason: "back" }),
    );
    expect(up.status).toBe(200);
    expect((await json(up)).balance_micro).toBe(MAX_BALANCE_MICRO.toString());
  });

  test("a credit larger than the limit itself, on an empty account: 400, also as an initial credit", async () => {
    const t = await makeTestApp();
    const over = "1000000000000.000001";
    const res = await t.request(
      `/admin/v1/accounts/${t.account.id}/credit`,
      admin("POST", { amount: over, reason: "too much" }),
    );
    expect(res.status).toBe(400);
    expect((await json<Err>(res)).error).toMatchObject(LIMIT_ERROR);
    const accounts = await countRows(t.ctx.sql, "accounts");
    const created = await t.request("/admin/v1/accounts", admin("POST", { name: "huge", credit: over }));
    expect(created.status).toBe(400);
    expect((await json<Err>(created)).error).toMatchObject(LIMIT_ERROR);
    // The account and its key are not created either: one transaction.
    expect(await countRows(t.ctx.sql, "accounts")).toBe(accounts);
    expect(await countRows(t.ctx.sql, "ledger_entries")).toBe(0);
  });
});
