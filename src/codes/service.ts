import type { Account, AccountStore, Currency } from "../accounts/store.ts";
import type { Sql } from "../db/sql.ts";
import { serviceIn } from "../db/store.ts";
import type { Ledger } from "../ledger/ledger.ts";
import { DomainError } from "../lib/errors.ts";
import { newId, newTimeOrderedId } from "../lib/ids.ts";
import { formatMicro, MAX_BALANCE_MICRO, MAX_MICRO, parseDecimalToMicro } from "../lib/money.ts";
import { rfc3339 } from "../lib/time.ts";
import { codeHash, newCodeText, normaliseCode } from "./code.ts";
import { type BatchWithCounts, RedeemCodeStore } from "./store.ts";

/** Codes per batch, at most. */
export const MAX_BATCH_SIZE = 1000;
/** Failed redeem attempts an account may make per window before 429. */
export const REDEEM_MAX_FAILURES = 5;
export const REDEEM_WINDOW_SECONDS = 3600;
export const NOTE_MAX_LENGTH = 500;

/** One message for an unknown, used, expired or revoked code: it does not say which. */
export const INVALID_CODE_MESSAGE = "This code is not valid: check it, or ask whoever gave it to you.";
/**
 * A code this same account already redeemed: said plainly (a second submit is not a typo). Only
 * to the account that used it, so it tells a guesser nothing; it is not counted as a failed try.
 */
export const ALREADY_REDEEMED_MESSAGE =
  "This code was already redeemed into this account (a code credits once): see the Top-ups below.";

export interface NewBatch {
  amountMicro: bigint;
  currency: Currency;
  count: number;
  /** Epoch seconds; null: never. */
  expiresAt: number | null;
  note: string | null;
  /** The person who made it (console); null: the CLI or the admin API. */
  createdBy: string | null;
}

export interface Redeemed {
  account: Account;
  codeId: string;
  amountMicro: bigint;
  currency: Currency;
}

/** A batch as the admin API and the CLI print it. */
export function batchView(b: BatchWithCounts) {
  return {
    id: b.id,
    object: "redeem_code_batch" as const,
    currency: b.currency,
    amount_micro: b.amount_micro.toString(),
    count: Number(b.code_count),
    note: b.note,
    expires_at: rfc3339(b.expires_at),
    created_at: rfc3339(b.created_at)!,
    created_by: b.created_by,
    revoked_at: rfc3339(b.revoked_at),
    redeemed: Number(b.redeemed),
    unused: Number(b.unused),
    expired: Number(b.expired),
    revoked: Number(b.revoked),
  };
}
export type BatchView = Awaited<ReturnType<typeof batchView>>;

/**
 * `--expires` / `expires_at`: a day `YYYY-MM-DD` (the code works through that day, UTC: it expires
 * at the next midnight UTC) or an RFC 3339 instant. Must lie after `now` (epoch seconds).
 */
export function parseExpiry(text: string, now: number): number {
  const t = text.trim();
  let at: number | null = null;
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(t);
  if (day) {
    const ms = Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3]));
    const back = new Date(ms);
    if (back.getUTCDate() === Number(day[3]) && back.getUTCMonth() === Number(day[2]) - 1)
      at = ms / 1000 + 86_400;
  } else if (/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/.test(t)) {
    const ms = Date.parse(t.replace(" ", "T"));
    if (Number.isFinite(ms)) at = Math.ceil(ms / 1000);
  }
  if (at === null || at > 253_402_300_799) {
    throw new DomainError(
      "validation_error",
      "expires must be a date (YYYY-MM-DD, valid through that day UTC) or an RFC 3339 time.",
      { param: "expires_at" },
    );
  }
  if (at <= now)
    throw new DomainError("validation_error", "expires must be in the future.", { param: "expires_at" });
  return at;
}

/** A new batch as the CLI, the admin API and the console receive it: text fields, checked here once. */
export interface BatchInput {
  amount: string;
  currency: string;
  /** Default 1. */
  count?: string | number;
  expires?: string | null;
  note?: string | null;
  createdBy?: string | null;
}

/** Parses a BatchInput (400 validation_error naming the field at fault). */
export function parseBatchInput(input: BatchInput, now: number): NewBatch {
  const amountMicro = parseDecimalToMicro(input.amount);
  if (amountMicro === null || amountMicro === 0n)
    throw new DomainError(
      "validation_error",
      "amount must be a decimal above 0 with at most 6 places, e.g. 12.50.",
      {
        param: "amount",
      },
    );
  const currency = input.currency.trim().toUpperCase();
  if (currency !== "USD" && currency !== "RUB")
    throw new DomainError("validation_error", "currency must be USD or RUB.", { param: "currency" });
  const countText = String(input.count ?? 1).trim();
  const count = /^[0-9]{1,7}$/.test(countText) ? Number(countText) : 0;
  if (count < 1 || count > MAX_BATCH_SIZE)
    throw new DomainError("validation_error", `count must be an integer from 1 to ${MAX_BATCH_SIZE}.`, {
      param: "count",
    });
  const expires = input.expires?.trim();
  return {
    amountMicro,
    currency,
    count,
    expiresAt: expires ? parseExpiry(expires, now) : null,
    note: input.note?.trim() || null,
    createdBy: input.createdBy ?? null,
  };
}

/**
 * Redeem codes (docs/billing.md, "Redeem codes"): the operator makes batches, a customer redeems a
 * code into an account of its currency, once. Shared by the CLI, the admin API, the console and
 * POST /v1/account/redeem.
 */
export class CodeService {
  readonly store: RedeemCodeStore;

  constructor(
    private readonly sql: Sql,
    private readonly accounts: AccountStore,
    private readonly ledger: Ledger,
  ) {
    this.store = new RedeemCodeStore(sql);
  }

  /** Runs `fn` in one transaction, with `self` a view of this service whose stores write in it. */
  private async atomic<T>(fn: (self: this, tx: Sql) => Promise<T>): Promise<T> {
    return await this.sql.tx(
      async (tx) => await fn(serviceIn(this, tx, ["store", "accounts", "ledger"]), tx),
    );
  }

  private now(): number {
    return this.ledger.clock();
  }

  /** createBatch from text fields (CLI, admin API, console). */
  async createBatchFrom(input: BatchInput): Promise<{ batch: BatchView; codes: string[] }> {
    return await this.createBatch(parseBatchInput(input, this.now()));
  }

  /** Makes a batch of `count` codes. The codes are returned once; only their digests are kept. */
  async createBatch(input: NewBatch): Promise<{ batch: BatchView; codes: string[] }> {
    if (input.amountMicro <= 0n || input.amountMicro > MAX_MICRO)
      throw new DomainError("validation_error", "amount must be above 0.", { param: "amount" });
    // A code worth more than any balance may hold could never be redeemed (docs/money.md).
    if (input.amountMicro > MAX_BALANCE_MICRO)
      throw new DomainError(
        "validation_error",
        `amount may be at most the maximum balance of ${formatMicro(MAX_BALANCE_MICRO)}: a larger code could never be redeemed.`,
        { param: "amount", extra: { max_balance_micro: MAX_BALANCE_MICRO.toString() } },
      );
    if (input.currency !== "USD" && input.currency !== "RUB")
      throw new DomainError("validation_error", "currency must be USD or RUB.", { param: "currency" });
    if (!Number.isInteger(input.count) || input.count < 1 || input.count > MAX_BATCH_SIZE)
      throw new DomainError("validation_error", `count must be an integer from 1 to ${MAX_BATCH_SIZE}.`, {
        param: "count",
      });
    const note = input.note?.trim() || null;
    if (note !== null && note.length > NOTE_MAX_LENGTH)
      throw new DomainError("validation_error", `note must be at most ${NOTE_MAX_LENGTH} characters.`, {
        param: "note",
      });
    const now = this.now();
    if (input.expiresAt !== null && input.expiresAt <= now)
      throw new DomainError("validation_error", "expires must be in the future.", { param: "expires_at" });
    const texts: string[] = [];
    const codes: { id: string; hash: Uint8Array }[] = [];
    for (let i = 0; i < input.count; i++) {
      const text = newCodeText();
      texts.push(text);
      codes.push({ id: newId("rcode"), hash: codeHash(normaliseCode(text)!) });
    }
    const id = newTimeOrderedId("rbatch");
    await this.atomic(async (self) =>
      self.store.insertBatch({
        id,
        currency: input.currency,
        amount_micro: input.amountMicro,
        note,
        expires_at: input.expiresAt,
        created_at: now,
        created_by: input.createdBy,
        codes,
      }),
    );
    return { batch: batchView((await this.store.batch(id, now))!), codes: texts };
  }

  async listBatches(limit = 100, before: string | null = null): Promise<BatchView[]> {
    return (await this.store.batches(this.now(), limit, before)).map(batchView);
  }

  async getBatch(id: string): Promise<BatchView> {
    const b = await this.store.batch(id, this.now());
    if (!b) throw new DomainError("not_found", `No code batch ${id}.`);
    return batchView(b);
  }

  /** Revokes every unused code of the batch (redeemed ones stay redeemed). Again: revokes nothing. */
  async revokeBatch(id: string): Promise<{ batch: BatchView; revoked: number }> {
    const now = this.now();
    const revoked = await this.atomic(async (self) => {
      if (!(await self.store.batch(id, now))) throw new DomainError("not_found", `No code batch ${id}.`);
      return self.store.revokeUnused(id, now);
    });
    return { batch: batchView((await this.store.batch(id, now))!), revoked };
  }

  /**
   * Redeems `code` into the account: in ONE transaction, the code is marked used by a conditional
   * UPDATE (only if unredeemed, unrevoked, unexpired) and the account credited (ledger entry TOPUP
   * naming the code). Unknown, used by another account, expired or revoked: 400 invalid_code (one
   * message); used by this account: invalid_code with ALREADY_REDEEMED_MESSAGE (not a failed try);
   * another currency: 400 currency_mismatch. Each failed try is recorded after the failed
   * transaction; the 6th within an hour (and every try while 5 are in the window) is 429.
   * `by`: the key or person redeeming (kept on the code).
   */
  async redeem(accountId: string, code: string, by: string): Promise<Redeemed> {
    // Nothing typed is a form error, not a wrong code: not counted.
    if (!code.trim()) throw new DomainError("validation_error", "Enter a code.", { param: "code" });
    await this.checkThrottle(accountId);
    try {
      return await this.redeemOnce(accountId, code, by);
    } catch (err) {
      const failedTry =
        err instanceof DomainError &&
        (err.code === "invalid_code" || err.code === "currency_mismatch") &&
        err.message !== ALREADY_REDEEMED_MESSAGE;
      if (failedTry) {
        const now = this.now();
        await this.store.recordFailure(accountId, now, now - REDEEM_WINDOW_SECONDS);
      }
      throw err;
    }
  }

  private async redeemOnce(accountId: string, code: string, by: string): Promise<Redeemed> {
    const normalised = normaliseCode(code);
    if (normalised === null) throw new DomainError("invalid_code", INVALID_CODE_MESSAGE, { param: "code" });
    const hash = codeHash(normalised);
    return await this.atomic(async (self) => {
      const now = self.now();
      const account = await self.accounts.getAccount(accountId);
      if (!account) throw new DomainError("not_found", `No account ${accountId}.`);
      const row = await self.store.codeByHash(hash);
      const usable =
        row !== null &&
        row.redeemed_at === null &&
        row.revoked_at === null &&
        (row.expires_at === null || row.expires_at > BigInt(now));
      if (row?.redeemed_at != null && (await self.store.redeemedBy(row.id, accountId)))
        throw new DomainError("invalid_code", ALREADY_REDEEMED_MESSAGE, { param: "code" });
      if (!row || !usable) throw new DomainError("invalid_code", INVALID_CODE_MESSAGE, { param: "code" });
      if (row.currency !== account.currency) {
        throw new DomainError(
          "currency_mismatch",
          `This code is for ${row.currency} accounts; this account is in ${account.currency}.`,
          { param: "code" },
        );
      }
      if (!(await self.store.markRedeemed(row.id, accountId, by, now)))
        throw new DomainError("invalid_code", INVALID_CODE_MESSAGE, { param: "code" });
      await self.ledger.topUp(accountId, row.amount_micro, `redeem code ${row.batch_id}`, "TOPUP", row.id);
      return {
        account: (await self.accounts.getAccount(accountId))!,
        codeId: row.id,
        amountMicro: row.amount_micro,
        currency: row.currency,
      };
    });
  }

  /** 429 while the account has REDEEM_MAX_FAILURES failures in the last hour. */
  private async checkThrottle(accountId: string): Promise<void> {
    const now = this.now();
    const f = await this.store.failures(accountId, now - REDEEM_WINDOW_SECONDS);
    if (f.count < REDEEM_MAX_FAILURES || f.oldest === null) return;
    const retry = Math.max(1, f.oldest + REDEEM_WINDOW_SECONDS - now);
    throw new DomainError(
      "rate_limited",
      `Too many invalid codes for this account; try again in ${Math.ceil(retry / 60)} minute(s).`,
      {
        retryAfterSeconds: retry,
        rateLimit: {
          policy: "redeem",
          limit: REDEEM_MAX_FAILURES,
          windowSeconds: REDEEM_WINDOW_SECONDS,
          remaining: 0,
          resetSeconds: retry,
        },
      },
    );
  }
}
