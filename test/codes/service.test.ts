import { describe, expect, test } from "bun:test";
import { codesServices } from "./services.ts";

describe("redeem codes: happy paths", () => {
  test("a batch of codes: each credits its amount once, as a TOPUP entry naming the code", async () => {
    const t = await codesServices();
    const { batch, codes } = await t.batch("12.5", 3, { note: "  spring promo  " });
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

    const before = await t.balance(t.account.id);
    const r = await t.codes.redeem(t.account.id, codes[0]!, t.keyId);
    expect(r.amountMicro).toBe(12_500_000n);
    expect(r.currency).toBe("USD");
    expect(r.codeId).toMatch(/^rcode_/);
    expect(r.account.balance_micro).toBe(before + 12_500_000n);
    expect(await t.balance(t.account.id)).toBe(before + 12_500_000n);

    const entry = (await t.ctx.wallet.entries(t.account.id, 1, null)).data[0]!;
    expect(entry).toMatchObject({
      kind: "topup",
      label: "TOPUP",
      amount_micro: "12500000",
      ref_id: r.codeId,
      reason: `redeem code ${batch.id}`,
    });

    // Lower case and spaces instead of dashes: the same code.
    await t.codes.redeem(t.account.id, codes[1]!.toLowerCase().replaceAll("-", " "), t.keyId);
    expect(await t.codes.getBatch(batch.id)).toMatchObject({ redeemed: 2, unused: 1 });
  });

  test("RUB codes go into RUB accounts", async () => {
    const t = await codesServices();
    const { codes } = await t.batch("500", 1, { currency: "RUB" });
    const r = await t.codes.redeem(t.rub.account.id, codes[0]!, "person_test");
    expect(r.currency).toBe("RUB");
    expect(await t.balance(t.rub.account.id)).toBe(500_000_000n);
  });

  test("list: newest first, with redeemed, unused, expired and revoked counts", async () => {
    const t = await codesServices();
    const a = await t.batch("1", 4, { expires: "2027-02-01T00:00:00Z" });
    t.advance(1);
    const b = await t.batch("2", 2);
    await t.codes.redeem(t.account.id, a.codes[0]!, t.keyId);
    await t.codes.revokeBatch(b.batch.id);
    let list = await t.codes.listBatches();
    expect(list.map((x) => x.id)).toEqual([b.batch.id, a.batch.id]);
    expect(list[1]).toMatchObject({ redeemed: 1, unused: 3, expired: 0, revoked: 0 });
    expect(list[0]).toMatchObject({ redeemed: 0, unused: 0, expired: 0, revoked: 2 });

    // Past its expiry the unredeemed codes count as expired.
    t.advance(2_000_000_000 - t.now());
    list = await t.codes.listBatches();
    expect(list[1]).toMatchObject({ redeemed: 1, unused: 0, expired: 3, revoked: 0 });
    // Paging: before the newest.
    expect((await t.codes.listBatches(10, b.batch.id)).map((x) => x.id)).toEqual([a.batch.id]);
  });

  test("revoke: unused codes stop working, redeemed ones and their credit stay; again revokes nothing", async () => {
    const t = await codesServices();
    const { batch, codes } = await t.batch("3", 3);
    await t.codes.redeem(t.account.id, codes[0]!, t.keyId);
    const balance = await t.balance(t.account.id);
    const r = await t.codes.revokeBatch(batch.id);
    expect(r.revoked).toBe(2);
    expect(r.batch).toMatchObject({ redeemed: 1, unused: 0, revoked: 2 });
    expect(r.batch.revoked_at).not.toBeNull();
    expect(await t.balance(t.account.id)).toBe(balance);
    expect((await t.codes.revokeBatch(batch.id)).revoked).toBe(0);
    await expect((async () => await t.codes.redeem(t.account.id, codes[1]!, t.keyId))()).rejects.toThrow(
      "not valid",
    );
  });

  test("an expiry date means: through that day, UTC", async () => {
    const t = await codesServices(); // clock: 2027-01-15T08:00:00Z
    const { batch, codes } = await t.batch("1", 2, { expires: "2027-01-15" });
    expect(batch.expires_at).toBe("2027-01-16T00:00:00Z");
    t.advance(Date.parse("2027-01-15T23:59:59Z") / 1000 - t.now());
    await t.codes.redeem(t.account.id, codes[0]!, t.keyId);
    t.advance(1);
    await expect((async () => await t.codes.redeem(t.account.id, codes[1]!, t.keyId))()).rejects.toThrow(
      "not valid",
    );
  });
});
