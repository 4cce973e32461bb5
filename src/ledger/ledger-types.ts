import type { Currency } from "../accounts/store.ts";

/** The ledger's rows and arguments (src/ledger/ledger.ts). */

export type Source = "API" | "STUDIO" | "ADMIN" | "TOPUP";
export type EntryKind = "topup" | "adjustment" | "hold" | "charge" | "release";

export interface HoldRow {
  id: string;
  account_id: string;
  key_id: string | null;
  model_id: string | null;
  request_id: string | null;
  source: Source;
  currency: Currency;
  amount_micro: bigint;
  quoted_usd_micro: bigint;
  fx_rate_micro: bigint | null;
  status: "open" | "settled" | "released";
  charged_micro: bigint | null;
  charged_usd_micro: bigint | null;
  created_at: bigint;
  resolved_at: bigint | null;
}

export interface ReserveInput {
  accountId: string;
  keyId: string | null;
  modelId: string | null;
  requestId: string | null;
  /** Work is labelled API or STUDIO; ADMIN and TOPUP label credits only (figures.ts relies on it). */
  source: "API" | "STUDIO";
  /** The quoted price in micro-USD; converted to the account currency at the current rate. */
  quotedUsdMicro: bigint;
}

export interface SettleResult {
  /** False when the hold was already resolved: nothing changed. */
  changed: boolean;
  hold: HoldRow;
}

/** The caller's own writes around a reservation (Ledger.reserve). */
export interface ReserveAround {
  /** Sent beside the hold's insert (the hold is not yet in the ledger, nor the key's money held). */
  beforeLocks?: (hold: HoldRow) => Promise<unknown>;
  /** Sent first beside the key's and the account's UPDATEs; its throw is the reservation's. */
  withLocks?: WithLocks;
  /** Nothing follows in the transaction: the COMMIT may go with the last round (Sql.commitNow). */
  last?: boolean;
}

/**
 * The caller's own counters (a job's open-job counts), sent first beside a settlement's or a
 * release's key and account UPDATEs and ledger rows, all pipelined in one round trip on PostgreSQL,
 * so the rows every submit and settlement of a key waits for are held for that round trip and the
 * COMMIT (docs/performance.md "Issue 36: PostgreSQL round trips"). Lock order: the counters' rows
 * (api_keys, people), the key row, then the account row, as in reserve.
 */
export type WithLocks = () => Promise<unknown>;
