import type { AccountStore, Currency } from "../accounts/store.ts";
import { CSV_PAGE_ROWS, type CsvValue, csvStream, inPages, keysetPages, mapPages } from "../lib/csv.ts";
import { DomainError } from "../lib/errors.ts";
import { lowPriorityTurn } from "../lib/low-priority.ts";
import { formatMicro } from "../lib/money.ts";
import { rfc3339 } from "../lib/time.ts";
import type { EntryKind, Ledger, Source } from "./ledger.ts";
import { type EntryRow, NO_KEY_NAME, WALLET_SOURCES, type Wallet, type WalletSource } from "./wallet.ts";

/**
 * The console's money figures (overview, usage, wallet, billing) and their CSV files, read from the
 * ledger's tables through the same stores the API reads (docs/money.md, "Console figures"). Every
 * amount is a bigint in micro-units of the account's currency; times are RFC 3339 (UTC) strings.
 * Pages format amounts with the one money helper; these functions never format for display,
 * except in the CSV files (decimal columns next to the micro ones).
 */
export interface FigureStores {
  accounts: AccountStore;
  ledger: Ledger;
  wallet: Wallet;
  /** A key's last use: when it last opened a job (JobStore.lastJobAt), epoch ms. */
  jobs: { lastJobAt(keyId: string): Promise<bigint | null> };
}

export { NO_KEY_NAME };

export interface KeyFigures {
  key_id: string;
  name: string;
  prefix: string;
  state: "active" | "revoked";
  monthly_limit_micro: bigint | null;
  /** Charged this month (key_spend: the number the limit check uses). */
  spent_micro: bigint;
  /** Held by the key's open jobs (they count against the limit until they resolve). */
  held_micro: bigint;
  /** limit - spent - held, at least 0; null without a limit. */
  remaining_micro: bigint | null;
  last_used_at: string | null;
  created_at: string;
}

export interface SpendLine {
  spent_micro: bigint;
  calls: number;
}

export interface Overview {
  account_id: string;
  name: string;
  currency: Currency;
  balance_micro: bigint;
  held_micro: bigint;
  available_micro: bigint;
  /** The current calendar month (UTC), "YYYY-MM", by the ledger's clock. */
  month: string;
  /** The same number as GET /v1/account's month_spent_micro. */
  month_spent_micro: bigint;
  keys: KeyFigures[];
  /** This month's charges without a key (studio runs and chats): with the keys', month_spent_micro. */
  keyless_spent_micro: bigint;
  /** This month per model, largest first ("" = a charge that named no model). */
  by_model: (SpendLine & { model_id: string })[];
  /** threshold null: no alert set; below: balance < threshold. */
  alert: { threshold_micro: bigint | null; below: boolean };
}

/** The account, or 404 not_found naming `account_id`. */
export async function requireAccount(s: Pick<FigureStores, "accounts">, accountId: string) {
  const account = await s.accounts.getAccount(accountId);
  if (!account) throw new DomainError("not_found", `No account ${accountId}.`, { param: "account_id" });
  return account as typeof account & { alert_threshold_micro?: bigint | null };
}

/** Each key of the account (revoked ones included) with this month's spend against its limit. */
export async function keyFigures(s: FigureStores, accountId: string): Promise<KeyFigures[]> {
  return await Promise.all(
    (await s.accounts.listKeys(accountId)).map(async (k): Promise<KeyFigures> => {
      const usage = await s.ledger.keyUsage(k.id);
      const limit = k.monthly_limit_micro;
      const left = limit === null ? null : limit - usage.spent - usage.held;
      const last = await s.jobs.lastJobAt(k.id);
      return {
        key_id: k.id,
        name: k.name,
        prefix: k.prefix,
        state: k.revoked_at === null ? "active" : "revoked",
        monthly_limit_micro: limit,
        spent_micro: usage.spent,
        held_micro: usage.held,
        remaining_micro: left === null ? null : left > 0n ? left : 0n,
        last_used_at: last === null ? null : new Date(Number(last)).toISOString(),
        created_at: rfc3339(k.created_at)!,
      };
    }),
  );
}

/** The overview page: balance, this month's spend, each key against its limit, spend per model. */
export async function overview(s: FigureStores, accountId: string): Promise<Overview> {
  const account = await requireAccount(s, accountId);
  const month = s.ledger.currentMonth();
  const rows = await s.wallet.spendRows(accountId, month);
  await lowPriorityTurn(); // a console page's read: the API's waiting work first (src/lib/low-priority.ts)
  const byModel = new Map<string, SpendLine & { model_id: string }>();
  for (const r of rows) {
    const m = byModel.get(r.model_id) ?? { model_id: r.model_id, spent_micro: 0n, calls: 0 };
    m.spent_micro += r.spent_micro;
    m.calls += Number(r.calls);
    byModel.set(r.model_id, m);
  }
  const keys = await keyFigures(s, accountId);
  let keyless = 0n;
  for (const r of rows) if (r.key_id === null) keyless += r.spent_micro;
  const threshold = account.alert_threshold_micro ?? null;
  return {
    account_id: account.id,
    name: account.name,
    currency: account.currency,
    balance_micro: account.balance_micro,
    held_micro: account.held_micro,
    available_micro: account.balance_micro - account.held_micro,
    month,
    month_spent_micro: await s.wallet.monthTotal(accountId, month),
    keys,
    keyless_spent_micro: keyless,
    by_model: [...byModel.values()].sort(bySpend),
    alert: { threshold_micro: threshold, below: threshold !== null && account.balance_micro < threshold },
  };
}

const bySpend = (a: { spent_micro: bigint }, b: { spent_micro: bigint }) =>
  a.spent_micro > b.spent_micro ? -1 : a.spent_micro < b.spent_micro ? 1 : 0;

// ---------------------------------------------------------------------------------------------
// Usage

/** Whole UTC days, both ends included: "YYYY-MM-DD". */
export interface UsageRange {
  from: string;
  to: string;
}

/** The longest range usage accepts (two years and a day). */
export const MAX_USAGE_DAYS = 732;
const DAY = 86_400;
const DAY_PATTERN = /^(2\d{3})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

const dayOf = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

function daySeconds(day: string, param: string): number {
  const m = DAY_PATTERN.exec(day);
  const seconds = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / 1000 : Number.NaN;
  if (!m || dayOf(seconds) !== day) {
    throw new DomainError("validation_error", `${param} must be a date YYYY-MM-DD (got "${day}").`, {
      param,
    });
  }
  return seconds;
}

/** The last `n` days up to and including today (UTC), by the ledger's clock. */
export function lastDays(s: Pick<FigureStores, "ledger">, n: number): UsageRange {
  const today = daySeconds(dayOf(s.ledger.clock()), "to");
  return { from: dayOf(today - (n - 1) * DAY), to: dayOf(today) };
}

/** The last `n` calendar months including the current one: from the 1st of the first to today. */
export function lastMonths(s: Pick<FigureStores, "ledger">, n: number): UsageRange {
  const now = new Date(s.ledger.clock() * 1000);
  const first = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - (n - 1), 1));
  return { from: first.toISOString().slice(0, 10), to: now.toISOString().slice(0, 10) };
}

/** One row of usage: the charges of a day, a key and a model. */
export interface UsageRow {
  day: string;
  month: string;
  /** null: charges made without a key (studio). */
  key_id: string | null;
  key_name: string;
  model_id: string;
  spent_micro: bigint;
  calls: number;
}

export interface Usage {
  account_id: string;
  currency: Currency;
  from: string;
  to: string;
  /** Every day of the range, in order (chart x-axis). */
  days: string[];
  /** Every calendar month the range touches, in order. */
  months: string[];
  total_micro: bigint;
  calls: number;
  /** Day x key x model, ordered by day, then key name, then model. Only non-empty cells. */
  rows: UsageRow[];
  /** Every day of the range (zeros included). */
  by_day: (SpendLine & { day: string })[];
  /** Every month of the range (zeros included); the part of the month inside the range. */
  by_month: (SpendLine & { month: string })[];
  by_model: (SpendLine & { model_id: string })[];
  by_key: (SpendLine & { key_id: string | null; key_name: string })[];
}

/**
 * Spend per day, month, key and model over a range, from the ledger's charge entries. A whole
 * month's total equals GET /v1/account/spend for that month to the micro-unit (docs/money.md).
 */
export async function usage(s: FigureStores, accountId: string, range: UsageRange): Promise<Usage> {
  const account = await requireAccount(s, accountId);
  const from = daySeconds(range.from, "from");
  const to = daySeconds(range.to, "to");
  if (to < from) throw new DomainError("validation_error", "from must not be after to.", { param: "from" });
  const count = (to - from) / DAY + 1;
  if (count > MAX_USAGE_DAYS) {
    throw new DomainError("validation_error", `A range spans at most ${MAX_USAGE_DAYS} days.`, {
      param: "from",
    });
  }
  const names = new Map((await s.accounts.listKeys(accountId)).map((k) => [k.id, k.name]));
  const nameOf = (keyId: string | null) => (keyId === null ? NO_KEY_NAME : (names.get(keyId) ?? keyId));
  const rows: UsageRow[] = (await s.wallet.chargesByDay(accountId, from, to + DAY)).map((b) => ({
    day: b.day,
    month: b.day.slice(0, 7),
    key_id: b.key_id,
    key_name: nameOf(b.key_id),
    model_id: b.model_id,
    spent_micro: b.spent_micro,
    calls: Number(b.calls),
  }));
  await lowPriorityTurn(); // a console page's read: the API's waiting work first (src/lib/low-priority.ts)
  rows.sort(
    (a, b) =>
      cmp(a.day, b.day) ||
      cmp(a.key_name, b.key_name) ||
      cmp(a.key_id ?? "", b.key_id ?? "") ||
      cmp(a.model_id, b.model_id),
  );
  const days = Array.from({ length: count }, (_, i) => dayOf(from + i * DAY));
  const months = [...new Set(days.map((d) => d.slice(0, 7)))];
  const byDay = new Map(days.map((day) => [day, { day, spent_micro: 0n, calls: 0 }]));
  const byMonth = new Map(months.map((month) => [month, { month, spent_micro: 0n, calls: 0 }]));
  const byModel = new Map<string, SpendLine & { model_id: string }>();
  const byKey = new Map<string, SpendLine & { key_id: string | null; key_name: string }>();
  let total = 0n;
  let calls = 0;
  const add = (line: SpendLine, r: UsageRow) => {
    line.spent_micro += r.spent_micro;
    line.calls += r.calls;
  };
  for (const r of rows) {
    total += r.spent_micro;
    calls += r.calls;
    add(byDay.get(r.day)!, r);
    add(byMonth.get(r.month)!, r);
    const m = byModel.get(r.model_id) ?? { model_id: r.model_id, spent_micro: 0n, calls: 0 };
    add(m, r);
    byModel.set(r.model_id, m);
    const k = byKey.get(r.key_id ?? "") ?? {
      key_id: r.key_id,
      key_name: r.key_name,
      spent_micro: 0n,
      calls: 0,
    };
    add(k, r);
    byKey.set(r.key_id ?? "", k);
  }
  return {
    account_id: accountId,
    currency: account.currency,
    from: range.from,
    to: range.to,
    days,
    months,
    total_micro: total,
    calls,
    rows,
    by_day: [...byDay.values()],
    by_month: [...byMonth.values()],
    by_model: [...byModel.values()].sort(bySpend),
    by_key: [...byKey.values()].sort(bySpend),
  };
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A chart's data: one x label per day or month of the range, one series per model or key. */
export interface UsageSeries {
  labels: string[];
  /** id: the model id, or the key id (null: no key); values in micro-units, one per label. */
  series: { id: string | null; name: string; values: bigint[] }[];
}

/** Usage as chart series (days or months x models or keys), largest series first. */
export function usageSeries(u: Usage, period: "day" | "month", by: "model" | "key"): UsageSeries {
  const labels = period === "day" ? u.days : u.months;
  const at = new Map(labels.map((l, i) => [l, i]));
  const series = new Map<string, { id: string | null; name: string; values: bigint[] }>();
  for (const r of u.rows) {
    const id = by === "model" ? r.model_id : r.key_id;
    const name = by === "model" ? r.model_id : r.key_name;
    const s = series.get(id ?? "\u0000") ?? { id, name, values: labels.map(() => 0n) };
    s.values[at.get(period === "day" ? r.day : r.month)!]! += r.spent_micro;
    series.set(id ?? "\u0000", s);
  }
  const sum = (v: bigint[]) => v.reduce((a, b) => a + b, 0n);
  return {
    labels,
    series: [...series.values()].sort((a, b) =>
      bySpend({ spent_micro: sum(a.values) }, { spent_micro: sum(b.values) }),
    ),
  };
}

/** Header of the usage CSV. */
export const USAGE_CSV_HEADER = [
  "date",
  "month",
  "key_id",
  "key_name",
  "model_id",
  "calls",
  "amount",
  "amount_micro",
  "currency",
] as const;

/**
 * The usage CSV: one record per day x key x model with charges; amounts as decimal and micro. The
 * rows are the range's (at most 365 days x keys x models, already read for the figures), streamed
 * in pages like every export.
 */
export function usageCsv(u: Usage): ReadableStream<Uint8Array> {
  return csvStream(
    USAGE_CSV_HEADER,
    mapPages(inPages(u.rows), (r) => [
      r.day,
      r.month,
      r.key_id ?? "",
      r.key_name,
      r.model_id,
      r.calls,
      formatMicro(r.spent_micro),
      r.spent_micro,
      u.currency,
    ]),
  );
}

// ---------------------------------------------------------------------------------------------
// Wallet and billing

export interface WalletEntry {
  id: string;
  created_at: string;
  kind: EntryKind;
  source: Source;
  amount_micro: bigint;
  balance_delta_micro: bigint;
  held_delta_micro: bigint;
  /** The running balance: stored with the entry by the ledger when it was written. */
  balance_after_micro: bigint;
  held_after_micro: bigint;
  key_id: string | null;
  model_id: string | null;
  request_id: string | null;
  reason: string | null;
  /** A TOPUP's cause (order `ord_...` or redeem code `rcode_...`), or the order a refund names. */
  ref_id: string | null;
}

export interface WalletPage {
  currency: Currency;
  entries: WalletEntry[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  next_cursor: string | null;
}

export interface WalletQuery {
  /** 1..100, default 50. */
  limit?: number;
  cursor?: string | null;
  /** API, STUDIO, ADMIN or TOPUP; empty or null: every source. */
  source?: string | null;
}

const CURSOR = /^[1-9][0-9]{0,17}$/;

/** A wallet query's limit, cursor and source, validated (400 validation_error naming the field). */
export function walletArgs(q: WalletQuery) {
  const limit = q.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new DomainError("validation_error", "limit must be an integer from 1 to 100.", { param: "limit" });
  }
  if (q.cursor && !CURSOR.test(q.cursor)) {
    throw new DomainError("validation_error", "cursor must be the next_cursor of a previous page.", {
      param: "cursor",
    });
  }
  return { limit, before: q.cursor ? BigInt(q.cursor) : null, source: parseWalletSource(q.source) };
}

/** A source filter: one of WALLET_SOURCES, or null for every source (400 otherwise). */
export function parseWalletSource(source: string | null | undefined): WalletSource | null {
  if (source === null || source === undefined || source === "") return null;
  if (!(WALLET_SOURCES as readonly string[]).includes(source)) {
    throw new DomainError("validation_error", `source must be one of ${WALLET_SOURCES.join(", ")}.`, {
      param: "source",
    });
  }
  return source as WalletSource;
}

/** A stored entry as the pages show it. */
export const entryOf = (e: EntryRow): WalletEntry => ({
  id: String(e.id),
  created_at: rfc3339(e.created_at)!,
  kind: e.kind,
  source: e.source,
  amount_micro: e.amount_micro,
  balance_delta_micro: e.balance_delta_micro,
  held_delta_micro: e.held_delta_micro,
  balance_after_micro: e.balance_after_micro,
  held_after_micro: e.held_after_micro,
  key_id: e.key_id,
  model_id: e.model_id,
  request_id: e.request_id,
  reason: e.reason,
  ref_id: e.ref_id,
});

/** The wallet page: entries newest first with their running balance, optionally one source. */
export async function walletPage(
  s: FigureStores,
  accountId: string,
  q: WalletQuery = {},
): Promise<WalletPage> {
  const account = await requireAccount(s, accountId);
  const a = walletArgs(q);
  const { rows, next } = await s.wallet.list(accountId, a);
  return {
    currency: account.currency,
    entries: rows.map(entryOf),
    next_cursor: next === null ? null : String(next),
  };
}

export const WALLET_CSV_HEADER = [
  "id",
  "created_at",
  "kind",
  "source",
  "amount",
  "amount_micro",
  "balance_delta",
  "balance_delta_micro",
  "balance_after",
  "balance_after_micro",
  "held_after_micro",
  "key_id",
  "model_id",
  "request_id",
  "reason",
  "currency",
] as const;

/**
 * The whole wallet (or one source of it) as CSV, newest first: a stream that reads the entries in
 * keyset pages of CSV_PAGE_ROWS by the index the entries page walks (ledger_entries_account, or
 * ledger_entries_credits for ADMIN and TOPUP). The account and the source are checked before the
 * first byte, so a bad one is still an error page. Entries never change and new ones have higher
 * ids than the first page's cursor, so the file is the wallet as of its first page.
 */
export async function walletCsv(
  s: FigureStores,
  accountId: string,
  q: { source?: string | null } = {},
): Promise<ReadableStream<Uint8Array>> {
  const account = await requireAccount(s, accountId);
  const source = parseWalletSource(q.source);
  const pages = keysetPages((before: bigint | null) =>
    s.wallet.list(accountId, { limit: CSV_PAGE_ROWS, before, source }),
  );
  return csvStream(
    WALLET_CSV_HEADER,
    mapPages(pages, (e) => walletCsvRecord(e, account.currency)),
  );
}

/** One wallet entry as a CSV record (WALLET_CSV_HEADER's columns). */
function walletCsvRecord(e: EntryRow, currency: Currency): CsvValue[] {
  return [
    String(e.id),
    rfc3339(e.created_at),
    e.kind,
    e.source,
    formatMicro(e.amount_micro),
    e.amount_micro,
    formatMicro(e.balance_delta_micro),
    e.balance_delta_micro,
    formatMicro(e.balance_after_micro),
    e.balance_after_micro,
    e.held_after_micro,
    e.key_id,
    e.model_id,
    e.request_id,
    e.reason,
    currency,
  ];
}

export interface Billing {
  currency: Currency;
  balance_micro: bigint;
  held_micro: bigint;
  available_micro: bigint;
  /** Top-up entries (kind "topup": operator credits labelled ADMIN, payments and codes TOPUP), newest first. */
  topups: WalletEntry[];
  next_cursor: string | null;
}

/** The billing page: the balance and the wallet's top-ups. */
export async function billing(
  s: FigureStores,
  accountId: string,
  q: { limit?: number; cursor?: string | null } = {},
): Promise<Billing> {
  const account = await requireAccount(s, accountId);
  const a = walletArgs(q);
  const { rows, next } = await s.wallet.credits(accountId, {
    limit: a.limit,
    before: a.before,
    kind: "topup",
  });
  return {
    currency: account.currency,
    balance_micro: account.balance_micro,
    held_micro: account.held_micro,
    available_micro: account.balance_micro - account.held_micro,
    topups: rows.map(entryOf),
    next_cursor: next === null ? null : String(next),
  };
}
