import type { Sql } from "../db/sql.ts";
import { jsonList, SqlStore } from "../db/store.ts";
import { rfc3339 } from "../lib/time.ts";
import type { EntryKind, Source } from "./ledger.ts";

const DAY = 86_400;

/**
 * A wallet entry's source as the console filters it: the ledger's labels, plus TOPUP (payments and
 * redeemed codes, issue 16). Filtering by a source no entry has yet simply finds nothing.
 */
export type WalletSource = Source | "TOPUP";
export const WALLET_SOURCES: readonly WalletSource[] = ["API", "STUDIO", "ADMIN", "TOPUP"];

/** One stored wallet entry (amounts in micro-units of the account currency, times in epoch seconds). */
export interface EntryRow {
  id: bigint;
  kind: EntryKind;
  source: Source;
  amount_micro: bigint;
  balance_delta_micro: bigint;
  held_delta_micro: bigint;
  balance_after_micro: bigint;
  held_after_micro: bigint;
  hold_id: string | null;
  key_id: string | null;
  model_id: string | null;
  request_id: string | null;
  reason: string | null;
  created_at: bigint;
  /** A top-up's cause (order `ord_...` or redeem code `rcode_...`), or the order a refund is for. */
  ref_id: string | null;
}

/** Charges of one UTC day, one key (null: a charge made without a key) and one model. */
export interface ChargeBucket {
  /** "YYYY-MM-DD" (UTC) of the charge entries' created_at. */
  day: string;
  key_id: string | null;
  /** "" when the charge named no model (as key_spend records it). */
  model_id: string;
  spent_micro: bigint;
  /** Charge entries counted (a settled hold is one, also when it charged 0). */
  calls: bigint;
}

/** The name spend and usage show for charges made without a key (studio work of a signed-in person). */
export const NO_KEY_NAME = "Studio (no key)";

/**
 * A month's spend row of an account: per key and model, as the limits count it (key_spend), plus
 * the charges made without a key (key_id null, named NO_KEY_NAME: the studio's, from the ledger).
 */
export interface KeySpendRow {
  key_id: string | null;
  key_name: string;
  model_id: string;
  spent_micro: bigint;
  calls: bigint;
}

/**
 * The console's range and credit reads, exported so a test can check their query plans. Spend is
 * read from the usage_daily rollup (migration 027: a range of its primary key, at most days x keys x
 * models rows whatever the traffic); credits from ledger_entries_credits (migration 010).
 */
export const WALLET_SQL = {
  // Days are epoch days (UTC): ?2 included, ?3 excluded.
  chargesByDay: `SELECT day AS d, CASE WHEN key_id = '' THEN NULL ELSE key_id END AS key_id, model_id,
           spent_micro, calls
         FROM usage_daily WHERE account_id = ?1 AND day >= ?2 AND day < ?3`,
  // The month's charges of the account without a key (key_id ''), per model.
  noKeyCharges: `SELECT model_id, sum(spent_micro) AS spent_micro, sum(calls) AS calls
         FROM usage_daily WHERE account_id = ?1 AND day >= ?2 AND day < ?3 AND key_id = ''
         GROUP BY model_id ORDER BY 1`,
  creditsBySource: `SELECT * FROM ledger_entries WHERE account_id = ?1 AND id < ?2 AND kind IN ('topup', 'adjustment')
           AND source = ?3
         ORDER BY id DESC LIMIT ?4`,
  // The statement: one row per job (at its last entry) and per credit, newest first. Walks
  // ledger_entries_account backwards from the cursor and looks each job entry's hold up by its
  // primary key; a job's hold entry is its last while the hold is open, its charge when nothing was
  // released (charged = held), its release otherwise (release is always written last). A page of
  // N rows reads its rows' entries (at most 3N) plus the earlier entries of jobs that ended after
  // the page's newest row (those running meanwhile: bounded by the in-flight caps). One statement:
  // the entries and the holds are read in the same snapshot.
  statement: `SELECT e.*, h.status AS hold_status, h.amount_micro AS held_micro, h.charged_micro,
           h.created_at AS started_at
         FROM ledger_entries e LEFT JOIN holds h ON h.id = e.hold_id
         WHERE e.account_id = ?1 AND e.id < ?2 AND (?3 = '' OR e.source = ?3)
           AND (e.kind IN ('topup', 'adjustment', 'release')
             OR (e.kind = 'charge' AND h.charged_micro = h.amount_micro)
             OR (e.kind = 'hold' AND h.status = 'open'))
         ORDER BY e.id DESC LIMIT ?4`,
  // A statement page's jobs' entries (at most 3 each), by ledger_entries_hold (migration 021);
  // `list` is the JSON-array sub-select of the dialect (jsonList). No account term: the holds come
  // from the account's own rows, and with one SQLite would walk the account's whole history instead.
  jobEntries: (list: string) => `SELECT * FROM ledger_entries
         WHERE hold_id IS NOT NULL AND hold_id IN (${list})
         ORDER BY id`,
} as const;

/**
 * A statement row as stored: the entry that ends it (a credit, or a job's last entry so far) and,
 * for a job, its hold. `id` orders the statement and is its cursor.
 */
export interface StatementEntryRow extends EntryRow {
  hold_status: "open" | "settled" | "released" | null;
  /** The hold's amount (what the job held while it ran); null for a credit. */
  held_micro: bigint | null;
  /** What the job was charged; null while it runs or when it was released. */
  charged_micro: bigint | null;
  /** When the job's hold was placed (epoch seconds); null for a credit. */
  started_at: bigint | null;
}

/** Read side of the wallet: the entries and the spend breakdowns shown to clients and operators. */
export class Wallet extends SqlStore {
  protected override s = {
    // A range of usage_daily's primary key: the range's rollup rows only (migration 027).
    chargesByDay: this.q<Omit<ChargeBucket, "day"> & { d: bigint }, [string, number, number]>(
      WALLET_SQL.chargesByDay,
    ),
    bySource: this.q<EntryRow, [string, bigint, string, number]>(
      `SELECT * FROM ledger_entries WHERE account_id = ?1 AND id < ?2 AND (?3 = '' OR source = ?3)
         ORDER BY id DESC LIMIT ?4`,
    ),
    creditsBySource: this.q<EntryRow, [string, bigint, string, number]>(WALLET_SQL.creditsBySource),
    noKeyCharges: this.q<{ model_id: string; spent_micro: bigint; calls: bigint }, [string, number, number]>(
      WALLET_SQL.noKeyCharges,
    ),
    statement: this.q<StatementEntryRow, [string, bigint, string, number]>(WALLET_SQL.statement),
    jobEntries: this.q<EntryRow, [string]>(WALLET_SQL.jobEntries(jsonList(this.sql))),
    // Served by ledger_entries_credits (migration 010): the term below is the index's own WHERE.
    credits: this.q<EntryRow, [string, bigint, string, number]>(
      `SELECT * FROM ledger_entries WHERE account_id = ?1 AND id < ?2 AND kind IN ('topup', 'adjustment')
           AND (?3 = '' OR kind = ?3)
         ORDER BY id DESC LIMIT ?4`,
    ),
  };

  constructor(sql: Sql) {
    super(sql);
  }

  /**
   * Charges of whole UTC days between two instants (epoch seconds at midnight, `from` included,
   * `to` excluded), summed per day, key and model: the one read every usage figure of the console
   * is built from, served by the usage_daily rollup (equal to the charge entries, migration 027).
   */
  async chargesByDay(accountId: string, fromSeconds: number, toSeconds: number): Promise<ChargeBucket[]> {
    const [from, to] = [Math.floor(fromSeconds / DAY), Math.ceil(toSeconds / DAY)];
    // One date string per day, not per row: a year's usage has days x keys x models rows (2,000+
    // at 6 keys and 4 models), and a Date and its ISO string per row were 10 % of a page loop's CPU.
    const days = new Map<bigint, string>();
    const dayOf = (d: bigint) => {
      let text = days.get(d);
      if (text === undefined) {
        text = new Date(Number(d) * 86_400_000).toISOString().slice(0, 10);
        days.set(d, text);
      }
      return text;
    };
    return (await this.s.chargesByDay.all(accountId, from, to)).map(({ d, ...r }) => ({
      day: dayOf(d),
      ...r,
    }));
  }

  /**
   * Entries newest first, all of them or those of one source; `before` is the id of the previous
   * page's last entry. Up to `limit` rows and the next page's cursor (null on the last page).
   */
  async list(
    accountId: string,
    o: { limit: number; before?: bigint | null; source?: WalletSource | null },
  ): Promise<{ rows: EntryRow[]; next: bigint | null }> {
    const before = o.before ?? 2n ** 62n;
    // ADMIN and TOPUP label credits only (reserve takes API or STUDIO): read them from the small
    // credits index instead of walking every job entry of the account.
    if (o.source === "ADMIN" || o.source === "TOPUP") {
      return page(await this.s.creditsBySource.all(accountId, before, o.source, o.limit + 1), o.limit);
    }
    return page(await this.s.bySource.all(accountId, before, o.source ?? "", o.limit + 1), o.limit);
  }

  /**
   * The statement newest first (docs/money.md "The wallet's statement"): one row per job, at its
   * last entry, and one per credit; all of them or one source's. `before` is the previous page's
   * last row id. A job's row moves to the top when it ends (its last entry is then its charge or
   * release), so paging never shows a row twice; a job that ends while someone pages is at the top.
   */
  async statement(
    accountId: string,
    o: { limit: number; before?: bigint | null; source?: WalletSource | null },
  ): Promise<{ rows: StatementEntryRow[]; next: bigint | null }> {
    // Credits only: list() reads them from the small credits index; they have no hold.
    if (o.source === "ADMIN" || o.source === "TOPUP") {
      const { rows, next } = await this.list(accountId, o);
      const noHold = { hold_status: null, held_micro: null, charged_micro: null, started_at: null };
      return { rows: rows.map((r) => ({ ...r, ...noHold })), next };
    }
    return page(
      await this.s.statement.all(accountId, o.before ?? 2n ** 62n, o.source ?? "", o.limit + 1),
      o.limit,
    );
  }

  /**
   * The entries of the jobs held by `holdIds` (hold, charge, release), oldest first. The ids must
   * come from the account's own statement rows: this reads by hold only.
   */
  async jobEntries(holdIds: readonly string[]): Promise<EntryRow[]> {
    if (holdIds.length === 0) return [];
    return await this.s.jobEntries.all(JSON.stringify(holdIds));
  }

  /** Credits newest first: top-ups (`kind` "topup") or top-ups and operator adjustments (null). */
  async credits(
    accountId: string,
    o: { limit: number; before?: bigint | null; kind?: "topup" | "adjustment" | null },
  ): Promise<{ rows: EntryRow[]; next: bigint | null }> {
    return page(
      await this.s.credits.all(accountId, o.before ?? 2n ** 62n, o.kind ?? "", o.limit + 1),
      o.limit,
    );
  }

  /** Newest first; `before` is the id of the last entry of the previous page. */
  async entries(accountId: string, limit: number, before: bigint | null) {
    const rows = await this.q<EntryRow, [string, bigint, number]>(
      "SELECT * FROM ledger_entries WHERE account_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
    ).all(accountId, before ?? 2n ** 62n, limit + 1);
    const page = rows.slice(0, limit);
    return {
      data: page.map(entryView),
      next_cursor: rows.length > limit ? String(page[page.length - 1]!.id) : null,
    };
  }

  /** Spend of one calendar month, per key and per model (key_spend is kept with every charge). */
  async spend(accountId: string, month: string) {
    const rows = await this.spendRows(accountId, month);
    const byKey = new Map<
      string | null,
      { key_id: string | null; name: string; spent_micro: bigint; calls: bigint }
    >();
    const byModel = new Map<string, { model_id: string; spent_micro: bigint; calls: bigint }>();
    let total = 0n;
    for (const r of rows) {
      total += r.spent_micro;
      const k = byKey.get(r.key_id) ?? { key_id: r.key_id, name: r.key_name, spent_micro: 0n, calls: 0n };
      k.spent_micro += r.spent_micro;
      k.calls += r.calls;
      byKey.set(r.key_id, k);
      const m = byModel.get(r.model_id) ?? { model_id: r.model_id, spent_micro: 0n, calls: 0n };
      m.spent_micro += r.spent_micro;
      m.calls += r.calls;
      byModel.set(r.model_id, m);
    }
    const str = <T extends { spent_micro: bigint; calls: bigint }>(x: T) => ({
      ...x,
      spent_micro: x.spent_micro.toString(),
      calls: Number(x.calls),
    });
    return {
      month,
      total_micro: total.toString(),
      by_key: [...byKey.values()].map(str),
      by_model: [...byModel.values()].map(str),
      by_key_and_model: rows.map((r) => ({
        key_id: r.key_id,
        model_id: r.model_id,
        spent_micro: r.spent_micro.toString(),
        calls: Number(r.calls),
      })),
    };
  }

  /**
   * The spend rows of an account's month (GET /v1/account/spend and the overview are built from
   * them): key_spend per key and model, then the month's charges without a key (the studio's),
   * per model, under key_id null.
   */
  async spendRows(accountId: string, month: string): Promise<KeySpendRow[]> {
    const keyed = await this.q<KeySpendRow, [string, string]>(
      `SELECT s.key_id, k.name AS key_name, s.model_id, s.spent_micro, s.calls
         FROM key_spend s JOIN api_keys k ON k.id = s.key_id
         WHERE k.account_id = ? AND s.month = ? ORDER BY s.key_id, s.model_id`,
    ).all(accountId, month);
    const [from, to] = monthRange(month);
    const noKey = (await this.s.noKeyCharges.all(accountId, from, to)).map((r) => ({
      key_id: null,
      key_name: NO_KEY_NAME,
      ...r,
    }));
    return [...keyed, ...noKey];
  }

  /** The month's spend of the account: every key's (key_spend) and the charges without a key. */
  async monthTotal(accountId: string, month: string): Promise<bigint> {
    const row = await this.q<{ s: bigint | null }, [string, string]>(
      "SELECT sum(s.spent_micro) AS s FROM key_spend s JOIN api_keys k ON k.id = s.key_id WHERE k.account_id = ? AND s.month = ?",
    ).get(accountId, month);
    const [from, to] = monthRange(month);
    let noKey = 0n;
    for (const r of await this.s.noKeyCharges.all(accountId, from, to)) noKey += r.spent_micro;
    return (row?.s ?? 0n) + noKey;
  }
}

/** A calendar month "YYYY-MM" (UTC) as epoch days [start, end): usage_daily's `day`. */
function monthRange(month: string): [number, number] {
  const [y, m] = month.split("-").map(Number) as [number, number];
  return [Date.UTC(y, m - 1, 1) / 1000 / DAY, Date.UTC(y, m, 1) / 1000 / DAY];
}

function page<R extends { id: bigint }>(rows: R[], limit: number): { rows: R[]; next: bigint | null } {
  const shown = rows.slice(0, limit);
  return { rows: shown, next: rows.length > limit ? shown[shown.length - 1]!.id : null };
}

function entryView(e: EntryRow) {
  return {
    id: String(e.id),
    object: "ledger_entry" as const,
    kind: e.kind,
    label: e.source,
    amount_micro: e.amount_micro.toString(),
    balance_delta_micro: e.balance_delta_micro.toString(),
    held_delta_micro: e.held_delta_micro.toString(),
    balance_after_micro: e.balance_after_micro.toString(),
    held_after_micro: e.held_after_micro.toString(),
    key_id: e.key_id,
    model_id: e.model_id,
    request_id: e.request_id,
    hold_id: e.hold_id,
    reason: e.reason,
    ref_id: e.ref_id,
    created_at: rfc3339(e.created_at)!,
  };
}
export type EntryView = Awaited<ReturnType<typeof entryView>>;
