import { describe, expect, test } from "bun:test";
import {
  ALREADY_REDEEMED_MESSAGE,
  INVALID_CODE_MESSAGE,
  parseBatchInput,
  parseExpiry,
} from "../../src/codes/service.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { codesServices } from "./services.ts";

async function caught(fn: () => unknown): Promise<DomainError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error("expected a DomainError");
}

describe("redeem codes: errors", () => {
  test("a code this account already used says so, and is not a failed try", async () => {
    const t = await codesServices();
    const used = (await t.batch("1")).codes[0]!;
    await t.codes.redeem(t.account.id, used, t.keyId);
    const err = await caught(async () => await t.codes.redeem(t.account.id, used, t.keyId));
    expect(err.code).toBe("invalid_code");
    expect(err.message).toBe(ALREADY_REDEEMED_MESSAGE);
    expect(err.param).toBe("code");
    expect((await t.codes.store.failures(t.account.id, 0)).count).toBe(0);
  });

  test("unknown, used (by another account), expired and revoked codes: the same invalid_code, nothing credited", async () => {
    const t = await codesServices();
    const used = (await t.batch("1")).codes[0]!;
    const other = await t.ctx.accounts.createAccount("other", "USD");
    await t.codes.redeem(other.account.id, used, other.keyId);
    const expiring = (await t.batch("1", 1, { expires: "2027-01-15T09:00:00Z" })).codes[0]!;
    const revokedBatch = await t.batch("1");
    await t.codes.revokeBatch(revokedBatch.batch.id);
    t.advance(3600);
    const balance = await t.balance(t.account.id);
    const entries = (await t.ctx.wallet.entries(t.account.id, 100, null)).data.length;
    for (const code of ["AAAAA-AAAAA-AAAAA-AAAAA", used, expiring, revokedBatch.codes[0]!]) {
      const err = await caught(async () => await t.codes.redeem(t.account.id, code, t.keyId));
      expect(err.code).toBe("invalid_code");
      expect(err.message).toBe(INVALID_CODE_MESSAGE);
      expect(err.param).toBe("code");
      t.advance(3600); // keep the throttle out of this test
    }
    expect(await t.balance(t.account.id)).toBe(balance);
    expect((await t.ctx.wallet.entries(t.account.id, 100, null)).data.length).toBe(entries);
  });

  test("a code of another currency: currency_mismatch, and the code stays usable", async () => {
    const t = await codesServices();
    const { batch, codes } = await t.batch("5", 1, { currency: "RUB" });
    const err = await caught(async () => await t.codes.redeem(t.account.id, codes[0]!, t.keyId));
    expect(err.code).toBe("currency_mismatch");
    expect(err.message).toContain("RUB");
    expect(await t.balance(t.account.id)).toBe(0n);
    expect(await t.codes.getBatch(batch.id)).toMatchObject({ redeemed: 0, unused: 1 });
    await t.codes.redeem(t.rub.account.id, codes[0]!, "person_x");
    expect(await t.balance(t.rub.account.id)).toBe(5_000_000n);
  });

  test("5 failed codes in an hour, then 429 with Retry-After until the oldest leaves the window", async () => {
    const t = await codesServices();
    const good = (await t.batch("2")).codes[0]!;
    const rub = (await t.batch("2", 1, { currency: "RUB" })).codes[0]!;
    // A currency mismatch counts as a failure too.
    expect((await caught(async () => await t.codes.redeem(t.account.id, rub, t.keyId))).code).toBe(
      "currency_mismatch",
    );
    for (let i = 0; i < 4; i++) {
      t.advance(60);
      expect((await caught(async () => await t.codes.redeem(t.account.id, `BAD${i}`, t.keyId))).code).toBe(
        "invalid_code",
      );
    }
    t.advance(60);
    // The 6th try is refused before the code is looked at: even a good code.
    const limited = await caught(async () => await t.codes.redeem(t.account.id, good, t.keyId));
    expect(limited.code).toBe("rate_limited");
    expect(limited.retryAfterSeconds).toBe(3600 - 5 * 60);
    expect(limited.rateLimit).toMatchObject({
      policy: "redeem",
      limit: 5,
      windowSeconds: 3600,
      remaining: 0,
    });
    expect(await t.balance(t.account.id)).toBe(0n);
    // Refused tries are not failures: the window does not grow.
    t.advance(3600 - 5 * 60 - 1);
    expect(
      (await caught(async () => await t.codes.redeem(t.account.id, good, t.keyId))).retryAfterSeconds,
    ).toBe(1);
    t.advance(1);
    await t.codes.redeem(t.account.id, good, t.keyId);
    expect(await t.balance(t.account.id)).toBe(2_000_000n);
  });

  test("failures are recorded although the failed transaction rolled back", async () => {
    const t = await codesServices();
    await caught(async () => await t.codes.redeem(t.account.id, "nope", t.keyId));
    expect(await t.codes.store.failures(t.account.id, 0)).toEqual({ count: 1, oldest: t.now() });
  });

  test("an unknown account is not_found and not a failure", async () => {
    const t = await codesServices();
    const { codes } = await t.batch("1");
    expect(
      (await caught(async () => await t.codes.redeem("acct_nobodynobodynobody", codes[0]!, "x"))).code,
    ).toBe("not_found");
    expect((await t.codes.store.failures("acct_nobodynobodynobody", 0)).count).toBe(0);
    await t.codes.redeem(t.account.id, codes[0]!, t.keyId);
  });

  test("batch input: each bad field is a validation_error naming it", async () => {
    const now = 1_800_000_000;
    const ok = { amount: "1", currency: "USD" };
    const cases: [Record<string, unknown>, string][] = [
      [{ amount: "0" }, "amount"],
      [{ amount: "-1" }, "amount"],
      [{ amount: "1.1234567" }, "amount"],
      [{ amount: "1e3" }, "amount"],
      [{ amount: "99999999999999999999" }, "amount"],
      [{ currency: "EUR" }, "currency"],
      [{ count: 0 }, "count"],
      [{ count: 1001 }, "count"],
      [{ count: "2.5" }, "count"],
      [{ count: "-3" }, "count"],
      [{ expires: "2020-01-01" }, "expires_at"],
      [{ expires: "2027-02-30" }, "expires_at"],
      [{ expires: "tomorrow" }, "expires_at"],
      [{ expires: "2027-01-15T07:00:00Z" }, "expires_at"],
      [{ expires: "99999-01-01" }, "expires_at"],
      [{ note: "x".repeat(501) }, "note"],
    ];
    const t = await codesServices();
    for (const [patch, param] of cases) {
      const input = { ...ok, ...patch } as Parameters<typeof parseBatchInput>[0];
      const err = await caught(async () => await t.codes.createBatch(parseBatchInput(input, now)));
      expect(`${JSON.stringify(patch)} -> ${err.code} ${err.param}`).toBe(
        `${JSON.stringify(patch)} -> validation_error ${param}`,
      );
    }
    expect(parseBatchInput({ ...ok, currency: "rub", count: "1000" }, now)).toMatchObject({
      currency: "RUB",
      count: 1000,
      amountMicro: 1_000_000n,
    });
    expect(await t.codes.listBatches()).toEqual([]);
  });

  test("expiry: dates and RFC 3339 times", () => {
    const now = Date.parse("2027-01-15T08:00:00Z") / 1000;
    expect(parseExpiry("2027-01-15", now)).toBe(Date.parse("2027-01-16T00:00:00Z") / 1000);
    expect(parseExpiry("2027-01-15T09:30:00+01:00", now)).toBe(Date.parse("2027-01-15T08:30:00Z") / 1000);
    expect(parseExpiry("2027-01-15t08:00:00.5z", now)).toBe(now + 1);
    expect(() => parseExpiry("2027-01-15T08:00:00Z", now)).toThrow("future");
    expect(() => parseExpiry("2027-13-01", now)).toThrow("YYYY-MM-DD");
  });

  test("revoking or reading an unknown batch is not_found", async () => {
    const t = await codesServices();
    expect((await caught(async () => await t.codes.revokeBatch("rbatch_nonexistent00000"))).code).toBe(
      "not_found",
    );
    expect((await caught(async () => await t.codes.getBatch("rbatch_nonexistent00000"))).code).toBe(
      "not_found",
    );
  });
});
