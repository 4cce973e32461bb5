// Redeem codes and the maximum balance (MAX_BALANCE_MICRO, docs/money.md "The maximum balance"):
// a batch of codes worth more than any balance may hold is refused when made; a redeem that would
// pass the limit is a 400 naming it (it was a 500 once the sum passed 2^63 - 1), leaves the code
// usable and is not counted as a failed guess. Run on PostgreSQL by scripts/test-postgres.
import { describe, expect, test } from "bun:test";
import { formatMicro, MAX_BALANCE_MICRO, MAX_MICRO } from "../../src/lib/money.ts";
import { admin } from "../admin/helpers.ts";
import { countRows } from "../helpers/backend.ts";
import { json } from "../helpers/context.ts";
import { codesApp } from "./helpers.ts";

type Err = { error: { code: string; message: string; param?: string; max_balance_micro?: string } };
const MAX = formatMicro(MAX_BALANCE_MICRO);

describe("redeem codes and the maximum balance", () => {
  test("a batch whose codes are worth more than the maximum balance: 400 naming it, no batch", async () => {
    const t = await codesApp();
    for (const amount of ["1000000000000.000001", formatMicro(MAX_MICRO)]) {
      const res = await t.request(
        "/admin/v1/code-batches",
        admin("POST", { amount, currency: "USD", count: 2 }),
      );
      expect(res.status).toBe(400);
      const e = (await json<Err>(res)).error;
      expect(e).toMatchObject({
        code: "validation_error",
        param: "amount",
        max_balance_micro: MAX_BALANCE_MICRO.toString(),
      });
      expect(e.message).toContain(`maximum balance of ${MAX}`);
    }
    expect(await countRows(t.ctx.sql, "redeem_batches")).toBe(0);
    // Exactly the maximum is a valid code.
    const ok = await t.request("/admin/v1/code-batches", admin("POST", { amount: MAX, currency: "USD" }));
    expect(ok.status).toBe(201);
  });

  test("a redeem that would pass the maximum balance: 400 naming it; the code stays usable, no failure counted", async () => {
    const t = await codesApp();
    await t.ctx.ledger.topUp(t.account.id, MAX_BALANCE_MICRO - 1_000_000n, "almost full");
    const { codes } = await t.batch("5");
    const entries = await countRows(t.ctx.sql, "ledger_entries");
    // Several tries: a code refused by the limit is not a wrong guess, so the throttle (5 an hour)
    // does not close on the account.
    for (let i = 0; i < 6; i++) {
      const res = await t.request("/v1/account/redeem", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code: codes[0] }),
      });
      expect(res.status).toBe(400);
      const e = (await json<Err>(res)).error;
      expect(e).toMatchObject({ code: "validation_error", max_balance_micro: MAX_BALANCE_MICRO.toString() });
      expect(e.message).toContain(`maximum balance of ${MAX} USD`);
    }
    expect(await countRows(t.ctx.sql, "ledger_entries")).toBe(entries);
    expect(await countRows(t.ctx.sql, "redeem_codes WHERE redeemed_at IS NOT NULL")).toBe(0);
    expect(await countRows(t.ctx.sql, "redeem_failures")).toBe(0);
    expect(await t.balance(t.account.id)).toBe(MAX_BALANCE_MICRO - 1_000_000n);

    // Room made by a debit: the same code redeems, up to the limit exactly.
    await t.ctx.ledger.adjust(t.account.id, -4_000_000n, "make room");
    const r = await t.codes.redeem(t.account.id, codes[0]!, t.keyId);
    expect(r.account.balance_micro).toBe(MAX_BALANCE_MICRO);
  });
});
