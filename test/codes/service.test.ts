import { describe, expect, test } from "bun:test";
import { codesApp } from "./helpers.ts";

describe("redeem codes: happy paths", () => {
  test("a batch of codes: each credits its amount once, as a TOPUP entry naming the code", () => {
    const t = codesApp();
    const { batch, codes } = t.batch("12.5", 3, { note: "  spring promo  " });
    expect(codes).toHaveLength(3);
    expect(new Set(codes).size).toBe(3);
    expect(batch).toMatchObject({
      object: "redeem_code_batch",
      currency: "USD",
      amount_micro: "12500000",
      count: 3,
      note: "spring promo",
      expires_at: null,
      created_by: null,
      redeemed: 0,
      unused: 3,
      expired: 0,
      revoked: 0,
    });
    expect(batch.id).toMatch(/^rbatch_[0-9A-Za-z]{20}$/);

    const before = t.balance(t.account.id);
    const r = t.codes.redeem(t.account.id, codes[0]!, t.keyId);
    expect(r.amountMicro).toBe(12_500_000n);
    expect(r.currency).toBe("USD");
    expect(r.codeId).toMatch(/^rcode_/);
    expect(r.account.balance_micro).toBe(before + 12_500_000n);
    expect(t.balance(t.account.id)).toBe(before + 12_500_000n);

    const entry = t.ctx.wallet.entries(t.account.id, 1, null).data[0]!;
    expect(entry).toMatchObject({
      kind: "topup",
      label: "TOPUP",
      amount_micro: "12500000",
      ref_id: r.codeId,
      reason: `redeem code ${batch.id}`,
    });

    // Lower case and spaces instead of dashes: the same code.
    t.codes.redeem(t.account.id, codes[1]!.toLowerCase().replaceAll("-", " "), t.keyId);
    expect(t.codes.getBatch(batch.id)).toMatchObject({ redeemed: 2, unused: 1 });
  });

  test("RUB codes go into RUB accounts", () => {
    const t = codesApp();
    const { codes } = t.batch("500", 1, { currency: "RUB" });
    const r = t.codes.redeem(t.rub.account.id, codes[0]!, "person_test");
    expect(r.currency).toBe("RUB");
    expect(t.balance(t.rub.account.id)).toBe(500_000_000n);
  });

  test("list: newest first, with redeemed, unused, expired and revoked counts", () => {
    const t = codesApp();
    const a = t.batch("1", 4, { expires: "2027-02-01T00:00:00Z" });
    t.advance(1);
    const b = t.batch("2", 2);
    t.codes.redeem(t.account.id, a.codes[0]!, t.keyId);
    t.codes.revokeBatch(b.batch.id);
    let list = t.codes.listBatches();
    expect(list.map((x) => x.id)).toEqual([b.batch.id, a.batch.id]);
    expect(list[1]).toMatchObject({ redeemed: 1, unused: 3, expired: 0, revoked: 0 });
    expect(list[0]).toMatchObject({ redeemed: 0, unused: 0, expired: 0, revoked: 2 });

    // Past its expiry the unredeemed codes count as expired.
    t.advance(2_000_000_000 - t.now());
    list = t.codes.listBatches();
    expect(list[1]).toMatchObject({ redeemed: 1, unused: 0, expired: 3, revoked: 0 });
    // Paging: before the newest.
    expect(t.codes.listBatches(10, b.batch.id).map((x) => x.id)).toEqual([a.batch.id]);
  });

  test("revoke: unused codes stop working, redeemed ones and their credit stay; again revokes nothing", () => {
    const t = codesApp();
    const { batch, codes } = t.batch("3", 3);
    t.codes.redeem(t.account.id, codes[0]!, t.keyId);
    const balance = t.balance(t.account.id);
    const r = t.codes.revokeBatch(batch.id);
    expect(r.revoked).toBe(2);
    expect(r.batch).toMatchObject({ redeemed: 1, unused: 0, revoked: 2 });
    expect(r.batch.revoked_at).not.toBeNull();
    expect(t.balance(t.account.id)).toBe(balance);
    expect(t.codes.revokeBatch(batch.id).revoked).toBe(0);
    expect(() => t.codes.redeem(t.account.id, codes[1]!, t.keyId)).toThrow("not valid");
  });

  test("an expiry date means: through that day, UTC", () => {
    const t = codesApp(); // clock: 2027-01-15T08:00:00Z
    const { batch, codes } = t.batch("1", 2, { expires: "2027-01-15" });
    expect(batch.expires_at).toBe("2027-01-16T00:00:00Z");
    t.advance(Date.parse("2027-01-15T23:59:59Z") / 1000 - t.now());
    t.codes.redeem(t.account.id, codes[0]!, t.keyId);
    t.advance(1);
    expect(() => t.codes.redeem(t.account.id, codes[1]!, t.keyId)).toThrow("not valid");
  });
});
