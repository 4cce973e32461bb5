import type { Currency } from "../accounts/store.ts";
import { lowPriorityTurn } from "../lib/low-priority.ts";
import { rfc3339 } from "../lib/time.ts";
import {
  entryOf,
  type FigureStores,
  requireAccount,
  type WalletEntry,
  type WalletQuery,
  walletArgs,
} from "./figures.ts";
import type { Source } from "./ledger.ts";
import type { StatementEntryRow } from "./wallet.ts";

/**
 * The wallet as a statement (docs/money.md "The wallet's statement"): one row per job, API or
 * studio, however many entries it wrote (hold, charge, release), and one per credit (a top-up, an
 * operator's credit or adjustment). A row's amount is what it did to the balance and its balance
 * after is the ledger's own running balance after the row's last entry, so reading down the page
 * each row's balance after is the next (older) row's plus its amount, to the micro-unit.
 */
export type StatementDeps = Pick<FigureStores, "accounts" | "wallet">;

/**
 * held: the job runs and its hold is taken from the available balance, not spent; charged: it ended
 * and was charged (charged_micro, possibly 0), the rest released; released: it failed or was
 * canceled and nothing was charged. topup: a payment or redeem code (TOPUP) or an operator's
 * credit (ADMIN); adjustment: an operator's signed correction (ADMIN).
 */
export type StatementStatus = "held" | "charged" | "released" | "topup" | "adjustment";

export interface StatementRow {
  /** The row's last entry id: the statement's order and its cursor. */
  id: string;
  /** When the row's last entry was written (a job: when it ended, or when it started while held). */
  at: string;
  source: Source;
  status: StatementStatus;
  /** The change of the balance (signed): minus a job's charge, a credit's amount; 0 while held. */
  amount_micro: bigint;
  /** The balance after the row's last entry (the ledger's running balance). */
  balance_after_micro: bigint;
  /** Held by running jobs after the row's last entry. */
  held_after_micro: bigint;
  /** A job's hold (what it held while it ran), its charge and what was released; null for a credit. */
  held_micro: bigint | null;
  charged_micro: bigint | null;
  released_micro: bigint | null;
  /** When a job started (its hold was placed); null for a credit. */
  started_at: string | null;
  request_id: string | null;
  model_id: string | null;
  key_id: string | null;
  /** A credit's or adjustment's reason, or why a job's hold was released (its error code). */
  reason: string | null;
  /** A top-up's cause: an order `ord_...` or a redeem code `rcode_...`. */
  ref_id: string | null;
  /** The ledger entries behind the row, oldest first: a job's hold, charge, release; a credit's one. */
  entries: WalletEntry[];
}

export interface Statement {
  currency: Currency;
  rows: StatementRow[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  next_cursor: string | null;
}

function statusOf(r: StatementEntryRow): StatementStatus {
  if (r.kind === "topup" || r.kind === "adjustment") return r.kind;
  if (r.hold_status === "open") return "held";
  return r.hold_status === "settled" ? "charged" : "released";
}

function rowOf(r: StatementEntryRow, entries: WalletEntry[]): StatementRow {
  const status = statusOf(r);
  const job = r.hold_id !== null;
  const held = job ? (r.held_micro ?? 0n) : null;
  const charged = status === "charged" ? (r.charged_micro ?? 0n) : null;
  return {
    id: String(r.id),
    at: rfc3339(r.created_at)!,
    source: r.source,
    status,
    amount_micro: job ? -(charged ?? 0n) : r.balance_delta_micro,
    balance_after_micro: r.balance_after_micro,
    held_after_micro: r.held_after_micro,
    held_micro: held,
    charged_micro: charged,
    released_micro: status === "held" || !job ? null : held! - (charged ?? 0n),
    started_at: r.started_at === null ? null : rfc3339(r.started_at),
    request_id: r.request_id,
    model_id: r.model_id,
    key_id: r.key_id,
    reason: r.reason,
    ref_id: r.ref_id,
    entries,
  };
}

/**
 * One page of the statement, newest first: `limit` rows (1..100, default 50) before `cursor`, of
 * every source or one (API, STUDIO, ADMIN, TOPUP). Two bounded reads: the page's rows, then the
 * entries of its jobs (at most 3 each, by their holds). 400 for a bad limit, cursor or source.
 */
export async function walletStatement(
  s: StatementDeps,
  accountId: string,
  q: WalletQuery = {},
): Promise<Statement> {
  const account = await requireAccount(s, accountId);
  const a = walletArgs(q);
  const { rows, next } = await s.wallet.statement(accountId, a);
  await lowPriorityTurn(); // a console page's read: the API's waiting work first (src/lib/low-priority.ts)
  const holds = rows.flatMap((r) => (r.hold_id === null ? [] : [r.hold_id]));
  const byHold = new Map<string, WalletEntry[]>();
  // Read after the rows: a job that ended since has newer entries, which belong to its next row.
  const last = new Map(rows.map((r) => [r.hold_id, r.id]));
  for (const e of await s.wallet.jobEntries(holds)) {
    if (e.id > last.get(e.hold_id)!) continue;
    const list = byHold.get(e.hold_id!) ?? [];
    list.push(entryOf(e));
    byHold.set(e.hold_id!, list);
  }
  return {
    currency: account.currency,
    rows: rows.map((r) => rowOf(r, r.hold_id === null ? [entryOf(r)] : (byHold.get(r.hold_id) ?? []))),
    next_cursor: next === null ? null : String(next),
  };
}
