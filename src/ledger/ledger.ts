import type { Currency } from "../accounts/store.ts";
import { addToRollup, type Rollup } from "../db/rollups.ts";
import { afterCommit, nullIfChecked, type Sql } from "../db/sql.ts";
import { jsonList, SqlStore } from "../db/store.ts";
import { DomainError } from "../lib/errors.ts";
import { newTimeOrderedId } from "../lib/ids.ts";
import { formatMicro, MAX_BALANCE_MICRO, MAX_MICRO } from "../lib/money.ts";
import { nowSeconds } from "../lib/time.ts";
import { usdMicroToRubMicro } from "../pricing/fx.ts";
import { balanceLimitError } from "./balance-limit.ts";
import type {
  EntryKind,
  HoldRow,
  ReserveAround,
  ReserveInput,
  SettleResult,
  Source,
  WithLocks,
} from "./ledger-types.ts";
import { monthOf } from "./month.ts";

// The ledger's row and argument types live in ledger-types.ts (this file's 600-line budget).
export type * from "./ledger-types.ts";

/** What a pipelined statement settled with: its value, or its error thrown. */
function fulfilled<T>(r: PromiseSettledResult<T>): T {
  if (r.status === "rejected") throw r.reason;
  return r.value;
}

/** The references of an entry that is no job's (a credit or an adjustment). */
const NO_HOLD = { id: null, key_id: null, model_id: null, request_id: null } as const;

/** A key's monthly limit and the money its open jobs hold (holdOnKey's RETURNING, the row locked). */
interface KeyLimitRow {
  monthly_limit_micro: bigint | null;
  held_micro: bigint;
}

interface BalanceRow {
  balance_micro: bigint;
  held_micro: bigint;
}

/** The balance after a movement, with the account's low-balance alert state (src/alerts/). */
export interface MovedRow extends BalanceRow {
  alert_threshold_micro: bigint | null;
  alert_armed: bigint;
}

/**
 * Told of every movement of an account that has an alert threshold, inside its transaction
 * (src/alerts/). `credit`: a top-up or a positive adjustment (what may re-arm the alert).
 */
export interface BalanceWatcher {
  moved(tx: Sql, accountId: string, after: MovedRow, credit: boolean): Promise<void>;
}

/** A usage_daily row's delta: its key, and the charges and calls to add. */
type UsageDelta = { account: string; day: number; key: string; model: string; spent: bigint; calls: number };

/** What the balance-moving UPDATEs return: the balances and the alert state, in the same statement. */
const MOVED = "RETURNING balance_micro, held_micro, alert_threshold_micro, alert_armed";

export interface LedgerOptions {
  /** Named in insufficient_balance messages. */
  billingUrl: string;
  /** Clock in epoch seconds (tests move it across months). */
  now?: () => number;
}

/**
 * The money rules, in one place and free of HTTP:
 * - reserve places a hold only if it fits the available balance (a conditional UPDATE, so
 *   concurrent reservations can never overdraw) and the key's monthly limit;
 * - settle charges min(actual, hold) and releases the rest; release charges nothing;
 * - a hold resolves exactly once (compare-and-swap on its status); a second call is a no-op;
 * - every movement is a ledger entry in the same transaction as the change.
 * Every method is async (over the `Sql` port: SQLite or PostgreSQL). Each movement runs in `atomic`:
 * a transaction of its own (BEGIN IMMEDIATE on SQLite), or a savepoint inside the caller's transaction
 * when the ledger is bound to it with `in(tx)` (so a job's final state and its settlement commit
 * together).
 */
export class Ledger extends SqlStore {
  private readonly now: () => number;
  /** Told of every charge, inside its transaction (the server's metrics count them). */
  onCharge: ((currency: Currency, modelId: string | null, chargeMicro: bigint) => void) | null = null;
  /** Low-balance alerts; no call (and no statement) for an account without a threshold. */
  balanceWatcher: BalanceWatcher | null = null;

  constructor(
    sql: Sql,
    private readonly options: LedgerOptions,
  ) {
    super(sql);
    this.now = options.now ?? nowSeconds;
  }

  protected override s = {
    account: this.q<{ currency: Currency } & BalanceRow, [string]>(
      "SELECT currency, balance_micro, held_micro FROM accounts WHERE id = ?",
    ),
    // The account, the key's monthly limit and the alert threshold (reserve's path), read unlocked:
    // a limit set meanwhile applies from the key's next reservation.
    accountForHold: this.q<
      MovedRow & { currency: Currency; key_limit_micro: bigint | null },
      [string, string | null]
    >(
      `SELECT currency, balance_micro, held_micro, alert_threshold_micro, alert_armed,
           (SELECT monthly_limit_micro FROM api_keys WHERE id = ?2) AS key_limit_micro
         FROM accounts WHERE id = ?1`,
    ),
    reserveFunds: this.q<MovedRow, [bigint, string, bigint]>(
      `UPDATE accounts SET held_micro = held_micro + ?1
         WHERE id = ?2 AND balance_micro - held_micro >= ?3 ${MOVED}`,
    ),
    moveFunds: this.q<MovedRow, [bigint, bigint, string]>(
      `UPDATE accounts SET balance_micro = balance_micro + ?1, held_micro = held_micro + ?2
         WHERE id = ?3 ${MOVED}`,
    ),
    // A credit only while the balance stays within MAX_BALANCE_MICRO: ?3 is the limit minus the
    // amount, computed in bigint by the caller, so the comparison itself never overflows.
    creditFunds: this.q<MovedRow, [bigint, string, bigint]>(
      `UPDATE accounts SET balance_micro = balance_micro + ?1 WHERE id = ?2 AND balance_micro <= ?3 ${MOVED}`,
    ),
    // Debits only (a credit goes through creditFunds): balance + a negative delta cannot overflow.
    adjustFunds: this.q<MovedRow, [bigint, string]>(
      `UPDATE accounts SET balance_micro = balance_micro + ?1
         WHERE id = ?2 AND balance_micro + ?1 >= held_micro ${MOVED}`,
    ),
    // The key row locked (PostgreSQL, READ COMMITTED) before its spend is read, so two
    // reservations on one key cannot both fit the same remaining limit; settle and release write
    // the same row (held_micro), so they wait too. A key without a limit takes the amount at once;
    // one with a limit takes 0 here and the amount once checked (checkKeyLimit).
    holdOnKey: this.q<KeyLimitRow, [bigint, string]>(
      `UPDATE api_keys SET held_micro = held_micro + CASE WHEN monthly_limit_micro IS NULL THEN CAST(?1 AS BIGINT) ELSE 0 END
         WHERE id = ?2 RETURNING monthly_limit_micro, held_micro`,
    ),
    keySpent: this.q<{ s: bigint | null }, [string, string]>(
      "SELECT sum(spent_micro) AS s FROM key_spend WHERE key_id = ? AND month = ?",
    ),
    keyHeld: this.q<{ s: bigint | null }, [string]>("SELECT held_micro AS s FROM api_keys WHERE id = ?"),
    addKeyHeld: this.q("UPDATE api_keys SET held_micro = held_micro + ? WHERE id = ?"),
    fxRate: this.q<{ rate_micro: bigint }, [string]>("SELECT rate_micro FROM fx_rates WHERE currency = ?"),
    insertHold: this.q(
      `INSERT INTO holds (id, key_id, model_id, request_id, account_id, source, currency, amount_micro,
           quoted_usd_micro, fx_rate_micro, status, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?)`,
    ),
    // A ledger row with the account's figures read in the same statement (its held money offset by
    // ?6: a settlement's charge row shows the figures before its release), sent right after the
    // UPDATE that moved them, beside it: that UPDATE's RETURNING is not waited for.
    insertEntryAfter: this.q(
      `INSERT INTO ledger_entries (account_id, kind, source, amount_micro, balance_delta_micro, held_delta_micro,
           balance_after_micro, held_after_micro, hold_id, key_id, model_id, request_id, reason, created_at, ref_id)
         SELECT id, CAST(?1 AS TEXT), CAST(?2 AS TEXT), CAST(?3 AS BIGINT), CAST(?4 AS BIGINT), CAST(?5 AS BIGINT),
           balance_micro, held_micro + CAST(?6 AS BIGINT), CAST(?7 AS TEXT), CAST(?8 AS TEXT), CAST(?9 AS TEXT),
           CAST(?10 AS TEXT), CAST(?11 AS TEXT), CAST(?12 AS BIGINT), CAST(?14 AS TEXT)
         FROM accounts WHERE id = ?13`,
    ),
    getHold: this.q<HoldRow, [string]>("SELECT * FROM holds WHERE id = ?"),
    // A hold to settle or release, with its account's alert threshold (holdToResolve). A subquery,
    // not a JOIN: with bun:sqlite (SQLite 3.54) the JOIN took 12-14 us per call and this 3.4 us on
    // the same rows (docs/performance.md "Issue 36: the money path's statements, one by one").
    holdToResolve: this.q<HoldRow & { alert_threshold_micro: bigint | null }, [string]>(
      `SELECT holds.*, (SELECT alert_threshold_micro FROM accounts WHERE accounts.id = holds.account_id)
         AS alert_threshold_micro FROM holds WHERE holds.id = ?`,
    ),
    // A page of holds by primary key in one statement (the requests CSV: one per 1,000 jobs).
    getHolds: this.q<HoldRow, [string]>(`SELECT * FROM holds WHERE id IN (${jsonList(this.sql)})`),
    resolveHold: this.q<HoldRow, [string, bigint | null, bigint | null, number, string]>(
      `UPDATE holds SET status = ?1, charged_micro = ?2, charged_usd_micro = ?3, resolved_at = ?4
         WHERE id = ?5 AND status = 'open' RETURNING *`,
    ),
    addSpend: this.q(
      `INSERT INTO key_spend (key_id, month, model_id, spent_micro, calls) VALUES (?1, ?2, ?3, ?4, 1)
         ON CONFLICT (key_id, month, model_id) DO UPDATE SET spent_micro = key_spend.spent_micro + ?4, calls = key_spend.calls + 1`,
    ),
    // The per-day rollup every spend figure reads (migration 027): one row per account, UTC day, key
    // ('' none) and model ('' none), equal to the day's charge entries (a property test proves it).
    // One upsert per row and group commit (`usage`).
    addUsage: this.q<null, [string, number, string, string, bigint, number]>(
      `INSERT INTO usage_daily (account_id, day, key_id, model_id, spent_micro, calls) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (account_id, day, key_id, model_id)
         DO UPDATE SET spent_micro = usage_daily.spent_micro + ?5, calls = usage_daily.calls + ?6`,
    ),
  };

  /** usage_daily as a folded rollup (src/db/rollups.ts): a group commit's charges of a row, summed. */
  private readonly usage: Rollup<UsageDelta> = {
    add: (into, more) => {
      into.spent += more.spent;
      into.calls += more.calls;
    },
    write: async (sql, d) =>
      await this.s.addUsage.on(sql).run(d.account, d.day, d.key, d.model, d.spent, d.calls),
  };

  /**
   * Places a hold for a quoted price, or throws 402 insufficient_balance / key_limit_reached.
   * `around`: the caller's own writes in the same transaction (the ledger bound with `in(tx)`):
   * `beforeLocks(hold)` (a row of its own: the job) is sent beside the hold's insert, and
   * `withLocks` (its counter's conditional UPDATE, which may throw) first beside the key's and the
   * account's UPDATEs. The rows every reservation of a key or an account waits for are so taken
   * last, in one pipelined round trip before the COMMIT on PostgreSQL (docs/performance.md "Issue
   * 36: PostgreSQL round trips"). A refusal by `withLocks` wins over the ledger's own.
   */
  async reserve(input: ReserveInput, around: ReserveAround = {}): Promise<HoldRow> {
    if (input.quotedUsdMicro < 0n || input.quotedUsdMicro > MAX_MICRO) {
      throw new RangeError(`reserve: quoted amount out of range (${input.quotedUsdMicro})`);
    }
    const alone = !this.inCallersTx;
    return await this.atomicOrJoin(async (self) => {
      const account = await self.s.accountForHold.get(input.accountId, input.keyId);
      if (!account) throw new DomainError("not_found", `No account ${input.accountId}.`);
      const rate = account.currency === "USD" ? null : await self.rateFor(account.currency);
      const amount = rate === null ? input.quotedUsdMicro : usdMicroToRubMicro(input.quotedUsdMicro, rate);
      const now = self.now();
      // The row as inserted (not re-read: this runs on every submit).
      const hold: HoldRow = {
        id: newTimeOrderedId("hold"),
        account_id: input.accountId,
        key_id: input.keyId,
        model_id: input.modelId,
        request_id: input.requestId,
        source: input.source,
        currency: account.currency,
        amount_micro: amount,
        quoted_usd_micro: input.quotedUsdMicro,
        fx_rate_micro: rate,
        status: "open",
        charged_micro: null,
        charged_usd_micro: null,
        created_at: BigInt(now),
        resolved_at: null,
      };
      const { id, key_id: keyId } = hold;
      const ids = [id, keyId, input.modelId, input.requestId, input.accountId, input.source] as const;
      // A key's monthly limit or an account's alert is checked in code once the rows are locked;
      // otherwise every refusal is a failing statement (CHECK constraints) and on PostgreSQL the
      // COMMIT goes in the same round: the key's and the account's rows are held for no round
      // trip (docs/performance.md "Issue 36: PostgreSQL submits with one key").
      const limited = keyId !== null && account.key_limit_micro !== null;
      const final = (alone || around.last === true) && !limited && account.alert_threshold_micro === null;
      // One round: the new rows (the hold, the caller's), then the caller's counter, the key row,
      // the account row (settle's and release's lock order too) and the hold's ledger row.
      const sent = [
        self.s.insertHold.run(...ids, account.currency, amount, input.quotedUsdMicro, rate, now),
        around.beforeLocks?.(hold),
        around.withLocks?.(),
        keyId === null
          ? null
          : limited
            ? self.s.holdOnKey.get(amount, keyId)
            : self.s.addKeyHeld.run(amount, keyId).then(() => null),
        // Refused: no row (conditional UPDATE), or on the final path CHECK (held <= balance) failing.
        final
          ? self.s.moveFunds.get(0n, amount, input.accountId).catch(nullIfChecked)
          : self.s.reserveFunds.get(amount, input.accountId, amount),
        self.entryAfter(input.accountId, "hold", input.source, amount, 0n, amount, 0n, hold, null, now),
      ] as const;
      if (final) void self.sql.commitNow?.();
      const [held, job, own, key, moved, entry] = await Promise.allSettled(sent);
      // The first refusal in the order sent (PostgreSQL runs nothing after a failed statement):
      // the cap (429), the key's limit, the balance (402).
      for (const r of [held, job, own]) fulfilled(r);
      const keyRow = fulfilled(key);
      // A key with a monthly limit took nothing above (holdOnKey adds 0): checked now, under its lock.
      if (keyId !== null && keyRow && keyRow.monthly_limit_micro !== null) {
        await self.checkKeyLimit(keyId, keyRow, amount, account.currency);
        await self.s.addKeyHeld.run(amount, keyId);
      }
      const after = fulfilled(moved);
      if (!after) {
        const available = account.balance_micro - account.held_micro;
        throw new DomainError(
          "insufficient_balance",
          `Balance too low: this needs ${formatMicro(amount)} ${account.currency} and ${formatMicro(available)} is available. Top up at ${self.options.billingUrl}.`,
          { extra: { billing_url: self.options.billingUrl } },
        );
      }
      fulfilled(entry);
      // An alert threshold set since the read is seen at the next movement (it fires on a level).
      if (final) return hold;
      await self.watch(input.accountId, after, false);
      return hold;
    });
  }

  /**
   * Charges the actual price (micro-USD, converted with the rate fixed in the hold) capped at the
   * hold, and releases the rest. A hold that is no longer open is left alone: `changed` is false.
   */
  async settle(
    holdId: string,
    actualUsdMicro: bigint,
    withLocks?: WithLocks,
    last = false,
  ): Promise<SettleResult> {
    if (actualUsdMicro < 0n) throw new RangeError("settle: actual amount must be non-negative");
    const alone = !this.inCallersTx;
    return await this.atomicOrJoin(async (self) => {
      const { hold, final } = (await self.holdToResolve(holdId, alone || last)) ?? {};
      if (!hold) throw new Error(`settle: no hold ${holdId}`);
      if (hold.status !== "open") return { changed: false, hold };
      const usd = actualUsdMicro < hold.quoted_usd_micro ? actualUsdMicro : hold.quoted_usd_micro;
      const converted = hold.fx_rate_micro === null ? usd : usdMicroToRubMicro(usd, hold.fx_rate_micro);
      const charge = converted < hold.amount_micro ? converted : hold.amount_micro;
      const now = self.now();
      const resolved = await self.s.resolveHold.get("settled", charge, usd, now, holdId);
      if (!resolved) return { changed: false, hold: (await self.s.getHold.get(holdId))! };

      // One instant for the whole settlement: the charge entry's day and the key_spend month
      // must name the same calendar month, even at a month's last second (docs/money.md).
      const rest = hold.amount_micro - charge;
      const { account_id: account, source, key_id: keyId } = hold;
      // Pipelined in this order (see WithLocks): the caller's counters, the key's row, the account's
      // (charge and release in one UPDATE), the key's month, the account's day (usage_daily), and the
      // ledger rows; the COMMIT behind them when final (nothing here can refuse).
      const sent = [
        withLocks?.(),
        keyId ? self.s.addKeyHeld.run(-hold.amount_micro, keyId) : null,
        self.s.moveFunds.get(-charge, -hold.amount_micro, account),
        keyId ? self.s.addSpend.run(keyId, monthOf(now), hold.model_id ?? "", charge) : null,
        self.addUsage(account, Math.floor(now / 86_400), keyId ?? "", hold.model_id ?? "", charge),
        self.entryAfter(account, "charge", source, charge, -charge, -charge, rest, hold, null, now),
        rest > 0n ? self.entryAfter(account, "release", source, rest, 0n, -rest, 0n, hold, null, now) : null,
      ] as const;
      if (final) void self.sql.commitNow?.();
      const [, , moved] = await Promise.all(sent);
      if (!final) await self.watch(hold.account_id, moved!, false);
      // Told once the charge is committed, with the final-state hooks' counts (one synchronous run).
      const told = self.onCharge;
      if (told) afterCommit(() => told(hold.currency, hold.model_id, charge));
      return { changed: true, hold: resolved };
    });
  }

  /** Releases the whole hold, charging nothing (failed or cancelled work). No-op if resolved. */
  async release(holdId: string, reason?: string, withLocks?: WithLocks, last = false): Promise<SettleResult> {
    const alone = !this.inCallersTx;
    return await this.atomicOrJoin(async (self) => {
      const { hold, final } = (await self.holdToResolve(holdId, alone || last)) ?? {};
      if (!hold) throw new Error(`release: no hold ${holdId}`);
      const now = self.now();
      const resolved = await self.s.resolveHold.get("released", null, null, now, holdId);
      if (!resolved) return { changed: false, hold };
      const { account_id: account, amount_micro: amount } = hold;
      // Pipelined in this order (see WithLocks), the COMMIT behind them when final.
      const sent = [
        withLocks?.(),
        hold.key_id ? self.s.addKeyHeld.run(-amount, hold.key_id) : null,
        self.s.moveFunds.get(0n, -amount, account),
        self.entryAfter(account, "release", hold.source, amount, 0n, -amount, 0n, hold, reason ?? null, now),
      ] as const;
      if (final) void self.sql.commitNow?.();
      const [, , moved] = await Promise.all(sent);
      if (!final) await self.watch(hold.account_id, moved!, false);
      return { changed: true, hold: resolved };
    });
  }

  /**
   * Adds money. ADMIN: an operator's credit (reason required by the callers). TOPUP: a paid order
   * or a redeemed code, named by `refId` (`ord_...`, `rcode_...`); a unique index on ref_id makes a
   * second credit for the same cause fail its transaction (migration 011). Callers that credit a
   * cause mark it used by a conditional update in the same transaction, before calling this. A
   * credit past MAX_BALANCE_MICRO is refused (balanceLimitError) and writes nothing.
   */
  async topUp(
    accountId: string,
    amountMicro: bigint,
    reason: string | null,
    source: "ADMIN" | "TOPUP" = "ADMIN",
    refId: string | null = null,
  ): Promise<BalanceRow> {
    if (amountMicro <= 0n || amountMicro > MAX_MICRO)
      throw new DomainError("validation_error", "amount must be above 0.", { param: "amount" });
    if (source === "TOPUP" && !refId)
      throw new RangeError("topUp: a TOPUP credit must name its order or code");
    return await this.atomic(async (self) => {
      const account = await self.requireAccount(accountId);
      const after = await self.credit(accountId, account, amountMicro);
      await self.creditEntry(accountId, "topup", source, amountMicro, amountMicro, reason, refId);
      await self.watch(accountId, after, true);
      return after;
    });
  }

  /**
   * A signed correction by the operator, with a reason. It may not take the balance below what is
   * held by open jobs (409 conflict): holds must stay covered; nor above MAX_BALANCE_MICRO (400).
   */
  async adjust(
    accountId: string,
    deltaMicro: bigint,
    reason: string,
    refId: string | null = null,
  ): Promise<BalanceRow> {
    if (deltaMicro === 0n)
      throw new DomainError("validation_error", "amount must not be 0.", { param: "amount" });
    if (deltaMicro > MAX_MICRO || -deltaMicro > MAX_MICRO)
      throw new DomainError("validation_error", "amount out of range.", { param: "amount" });
    return await this.atomic(async (self) => {
      const account = await self.requireAccount(accountId);
      const after =
        deltaMicro > 0n
          ? await self.credit(accountId, account, deltaMicro)
          : await self.s.adjustFunds.get(deltaMicro, accountId);
      if (!after) {
        throw new DomainError(
          "conflict",
          `An adjustment of ${formatMicro(deltaMicro)} would leave less than the ${formatMicro(account.held_micro)} held by open jobs.`,
          { param: "amount" },
        );
      }
      const abs = deltaMicro < 0n ? -deltaMicro : deltaMicro;
      await self.creditEntry(accountId, "adjustment", "ADMIN", abs, deltaMicro, reason, refId);
      await self.watch(accountId, after, deltaMicro > 0n);
      return after;
    });
  }

  async getHold(id: string): Promise<HoldRow | null> {
    return await this.s.getHold.get(id);
  }

  /** The holds of these ids (unknown ids are left out), in no particular order. */
  async getHolds(ids: readonly string[]): Promise<HoldRow[]> {
    return ids.length === 0 ? [] : await this.s.getHolds.all(JSON.stringify(ids));
  }

  /** Spent this month + held by open jobs, for a key, in the account currency. */
  async keyUsage(keyId: string): Promise<{ spent: bigint; held: bigint }> {
    return {
      spent: (await this.s.keySpent.get(keyId, monthOf(this.now())))?.s ?? 0n,
      held: (await this.s.keyHeld.get(keyId))?.s ?? 0n,
    };
  }

  /** The ledger's clock, epoch seconds: the time its entries are dated with. */
  clock(): number {
    return this.now();
  }

  currentMonth(): string {
    return monthOf(this.now());
  }

  /** A charge added to its day's usage_daily row (folded in a group commit). */
  private async addUsage(account: string, day: number, key: string, model: string, spent: bigint) {
    const row = `${account}|${day}|${key}|${model}`;
    await addToRollup(this.sql, this.usage, row, { account, day, key, model, spent, calls: 1 });
  }

  /** One property read when the account has no threshold (the common case, and the hot path). */
  private async watch(accountId: string, after: MovedRow, credit: boolean): Promise<void> {
    if (after.alert_threshold_micro !== null && this.balanceWatcher)
      await this.balanceWatcher.moved(this.sql, accountId, after, credit);
  }

  /** A hold; `final`: nothing follows and no alert threshold to watch, so the COMMIT may go with it. */
  private async holdToResolve(holdId: string, last: boolean) {
    const row = await this.s.holdToResolve.get(holdId);
    if (!row) return null;
    const { alert_threshold_micro: threshold, ...hold } = row;
    return { hold: hold as HoldRow, final: last && threshold === null };
  }

  /** `key`: the key's row as locked by reserve (its held money is read with the lock, not again). */
  private async checkKeyLimit(keyId: string, key: KeyLimitRow, amount: bigint, currency: Currency) {
    const limit = key.monthly_limit_micro;
    if (limit === null) return;
    const spent = (await this.s.keySpent.get(keyId, monthOf(this.now())))?.s ?? 0n;
    const held = key.held_micro;
    if (spent + held + amount > limit) {
      throw new DomainError(
        "key_limit_reached",
        `This key's monthly limit of ${formatMicro(limit)} ${currency} would be exceeded (spent ${formatMicro(spent)}, held ${formatMicro(held)}, this request ${formatMicro(amount)}). Raise the limit or use another key.`,
      );
    }
  }

  private async rateFor(currency: Currency): Promise<bigint> {
    const row = await this.s.fxRate.get(currency);
    if (!row) {
      throw new DomainError(
        "unpriceable",
        `No USD->${currency} exchange rate is set; the operator must set one.`,
      );
    }
    return row.rate_micro;
  }

  /** Adds a positive amount to the balance, or throws balanceLimitError having written nothing. */
  private async credit(accountId: string, account: { currency: Currency } & BalanceRow, amount: bigint) {
    const after =
      amount <= MAX_BALANCE_MICRO
        ? await this.s.creditFunds.get(amount, accountId, MAX_BALANCE_MICRO - amount)
        : null;
    if (!after) throw balanceLimitError(account.currency, account.balance_micro, amount);
    return after;
  }

  private async requireAccount(accountId: string) {
    const account = await this.s.account.get(accountId);
    if (!account) throw new DomainError("not_found", `No account ${accountId}.`, { param: "account_id" });
    return account;
  }

  /** A top-up's or an adjustment's row: no hold, the balance moved by `delta`, now. */
  private async creditEntry(
    accountId: string,
    kind: "topup" | "adjustment",
    source: Source,
    amount: bigint,
    delta: bigint,
    reason: string | null,
    refId: string | null,
  ): Promise<void> {
    await this.entryAfter(accountId, kind, source, amount, delta, 0n, 0n, NO_HOLD, reason, this.now(), refId);
  }

  /**
   * The one way a ledger row is written: with the account's figures as the statements before it left
   * them (insertEntryAfter), read in the INSERT itself. A job's rows are sent beside the UPDATE that
   * moved the money (pipelined, its RETURNING not waited for); a credit's after its UPDATE returned
   * (its refusal decides whether a row is written at all). `refId`: what a credit is for (an order or
   * a redeem code id; a unique index makes a second credit for one cause fail, migration 011).
   */
  private async entryAfter(
    accountId: string,
    kind: EntryKind,
    source: Source,
    amount: bigint,
    balanceDelta: bigint,
    heldDelta: bigint,
    heldOffset: bigint,
    hold: Pick<HoldRow, "key_id" | "model_id" | "request_id"> & { id: string | null },
    reason: string | null,
    at: number,
    refId: string | null = null,
  ): Promise<void> {
    const refs = [hold.id, hold.key_id, hold.model_id, hold.request_id, reason] as const;
    const values = [
      kind,
      source,
      amount,
      balanceDelta,
      heldDelta,
      heldOffset,
      ...refs,
      at,
      accountId,
      refId,
    ] as const;
    await this.s.insertEntryAfter.run(...values);
  }
}
