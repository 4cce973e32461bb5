import type { Database } from "bun:sqlite";
import { rfc3339 } from "../lib/time.ts";
import type { EntryKind, Source } from "./ledger.ts";

interface EntryRow {
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
}

/** Read side of the wallet: the entries and the spend breakdowns shown to clients and operators. */
export class Wallet {
  constructor(private readonly db: Database) {}

  /** Newest first; `before` is the id of the last entry of the previous page. */
  entries(accountId: string, limit: number, before: bigint | null) {
    const rows = this.db
      .query<EntryRow, [string, bigint, number]>(
        "SELECT * FROM ledger_entries WHERE account_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
      )
      .all(accountId, before ?? 2n ** 62n, limit + 1);
    const page = rows.slice(0, limit);
    return {
      data: page.map(entryView),
      next_cursor: rows.length > limit ? String(page[page.length - 1]!.id) : null,
    };
  }

  /** Spend of one calendar month, per key and per model (key_spend is kept with every charge). */
  spend(accountId: string, month: string) {
    const rows = this.db
      .query<
        { key_id: string; key_name: string; model_id: string; spent_micro: bigint; calls: bigint },
        [string, string]
      >(
        `SELECT s.key_id, k.name AS key_name, s.model_id, s.spent_micro, s.calls
         FROM key_spend s JOIN api_keys k ON k.id = s.key_id
         WHERE k.account_id = ? AND s.month = ? ORDER BY s.key_id, s.model_id`,
      )
      .all(accountId, month);
    const byKey = new Map<string, { key_id: string; name: string; spent_micro: bigint; calls: bigint }>();
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

  monthTotal(accountId: string, month: string): bigint {
    const row = this.db
      .query<{ s: bigint | null }, [string, string]>(
        "SELECT sum(s.spent_micro) AS s FROM key_spend s JOIN api_keys k ON k.id = s.key_id WHERE k.account_id = ? AND s.month = ?",
      )
      .get(accountId, month);
    return row?.s ?? 0n;
  }
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
    created_at: rfc3339(e.created_at)!,
  };
}
export type EntryView = ReturnType<typeof entryView>;
