import type { Currency } from "../accounts/store.ts";
import type { Sql } from "../db/sql.ts";
import { SqlStore } from "../db/store.ts";

export interface BatchRow {
  id: string;
  currency: Currency;
  amount_micro: bigint;
  code_count: bigint;
  note: string | null;
  expires_at: bigint | null;
  created_at: bigint;
  created_by: string | null;
  revoked_at: bigint | null;
}

/** A batch with the state of its codes at `now`. */
export interface BatchWithCounts extends BatchRow {
  redeemed: bigint;
  revoked: bigint;
  expired: bigint;
  unused: bigint;
}

/** A code looked up by its hash, with its batch's amount, currency and expiry. */
/** A code as its receipt shows it: redeemed by the account asking. */
export interface RedeemedCode {
  id: string;
  batch_id: string;
  redeemed_at: bigint;
  redeemed_by: string;
  currency: Currency;
  amount_micro: bigint;
}

export interface CodeRow {
  id: string;
  batch_id: string;
  revoked_at: bigint | null;
  redeemed_at: bigint | null;
  currency: Currency;
  amount_micro: bigint;
  expires_at: bigint | null;
}

const COUNTS = `b.*,
  (SELECT count(*) FROM redeem_codes c WHERE c.batch_id = b.id AND c.redeemed_at IS NOT NULL) AS redeemed,
  (SELECT count(*) FROM redeem_codes c WHERE c.batch_id = b.id AND c.revoked_at IS NOT NULL) AS revoked,
  (SELECT count(*) FROM redeem_codes c WHERE c.batch_id = b.id AND c.redeemed_at IS NULL AND c.revoked_at IS NULL
     AND b.expires_at IS NOT NULL AND b.expires_at <= ?1) AS expired,
  (SELECT count(*) FROM redeem_codes c WHERE c.batch_id = b.id AND c.redeemed_at IS NULL AND c.revoked_at IS NULL
     AND (b.expires_at IS NULL OR b.expires_at > ?1)) AS unused`;

/**
 * Owns the tables of migration 012: redeem_batches, redeem_codes (only SHA-256 digests of the
 * codes) and redeem_failures. Prepared SQL only; the service (service.ts) runs the transactions.
 */
export class RedeemCodeStore extends SqlStore {
  protected override s = {
    insertBatch: this.q(
      `INSERT INTO redeem_batches (id, currency, amount_micro, code_count, note, expires_at, created_at, created_by)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertCode: this.q("INSERT INTO redeem_codes (id, batch_id, code_hash) VALUES (?, ?, ?)"),
    batch: this.q<BatchWithCounts, [number, string]>(
      `SELECT ${COUNTS} FROM redeem_batches b WHERE b.id = ?2`,
    ),
    batches: this.q<BatchWithCounts, [number, string | null, number]>(
      // PostgreSQL has no rowid: batch ids are time-ordered (ties within one ms may order differently).
      this.sql.dialect === "postgres"
        ? `SELECT ${COUNTS} FROM redeem_batches b
         WHERE (CAST(?2 AS TEXT) IS NULL OR b.id < ?2)
         ORDER BY b.id DESC LIMIT ?3`
        : `SELECT ${COUNTS} FROM redeem_batches b
         WHERE b.rowid < coalesce((SELECT rowid FROM redeem_batches WHERE id = ?2), 9223372036854775807)
         ORDER BY b.rowid DESC LIMIT ?3`,
    ),
    codeByHash: this.q<CodeRow, [Uint8Array]>(
      `SELECT c.id, c.batch_id, c.revoked_at, c.redeemed_at, b.currency, b.amount_micro, b.expires_at
         FROM redeem_codes c JOIN redeem_batches b ON b.id = c.batch_id WHERE c.code_hash = ?`,
    ),
    // The one way a code is used: only if unredeemed, unrevoked and its batch unexpired.
    markRedeemed: this.q<{ id: string }, [number, string, string, string, number]>(
      `UPDATE redeem_codes SET redeemed_at = ?1, redeemed_account_id = ?2, redeemed_by = ?3
         WHERE id = ?4 AND redeemed_at IS NULL AND revoked_at IS NULL
           AND (SELECT b.expires_at IS NULL OR b.expires_at > ?5 FROM redeem_batches b WHERE b.id = batch_id)
         RETURNING id`,
    ),
    revokeUnused: this.q(
      "UPDATE redeem_codes SET revoked_at = ? WHERE batch_id = ? AND redeemed_at IS NULL AND revoked_at IS NULL",
    ),
    markBatchRevoked: this.q("UPDATE redeem_batches SET revoked_at = ? WHERE id = ?"),
    redeemedBy: this.q<RedeemedCode, [string, string]>(
      `SELECT c.id, c.batch_id, c.redeemed_at, c.redeemed_by, b.currency, b.amount_micro
         FROM redeem_codes c JOIN redeem_batches b ON b.id = c.batch_id
         WHERE c.id = ? AND c.redeemed_account_id = ?`,
    ),
    failures: this.q<{ n: bigint; oldest: bigint | null }, [string, number]>(
      "SELECT count(*) AS n, min(at) AS oldest FROM redeem_failures WHERE account_id = ? AND at > ?",
    ),
    insertFailure: this.q("INSERT INTO redeem_failures (account_id, at) VALUES (?, ?)"),
    pruneFailures: this.q("DELETE FROM redeem_failures WHERE at <= ?"),
  };

  constructor(sql: Sql) {
    super(sql);
  }

  async insertBatch(
    b: Omit<BatchRow, "code_count" | "revoked_at" | "expires_at" | "created_at"> & {
      expires_at: number | null;
      created_at: number;
      codes: { id: string; hash: Uint8Array }[];
    },
  ): Promise<void> {
    await this.s.insertBatch.run(
      b.id,
      b.currency,
      b.amount_micro,
      b.codes.length,
      b.note,
      b.expires_at,
      b.created_at,
      b.created_by,
    );
    for (const c of b.codes) await this.s.insertCode.run(c.id, b.id, c.hash);
  }

  async batch(id: string, now: number): Promise<BatchWithCounts | null> {
    return await this.s.batch.get(now, id);
  }

  /** Newest first (insertion order); `before`: the last id of the previous page. */
  async batches(now: number, limit: number, before: string | null): Promise<BatchWithCounts[]> {
    return await this.s.batches.all(now, before, limit);
  }

  async codeByHash(hash: Uint8Array): Promise<CodeRow | null> {
    return await this.s.codeByHash.get(hash);
  }

  /** Compare-and-swap: true when this call used the code (it was unredeemed, unrevoked, unexpired). */
  async markRedeemed(codeId: string, accountId: string, by: string, now: number): Promise<boolean> {
    return (await this.s.markRedeemed.get(now, accountId, by, codeId, now)) !== null;
  }

  /** The code `codeId` if `accountId` redeemed it (its receipt); null otherwise, whoever asks. */
  async redeemedBy(codeId: string, accountId: string): Promise<RedeemedCode | null> {
    return await this.s.redeemedBy.get(codeId, accountId);
  }

  /** Revokes the batch's codes that are neither redeemed nor revoked; returns how many. */
  async revokeUnused(batchId: string, now: number): Promise<number> {
    const n = (await this.s.revokeUnused.run(now, batchId)).changes;
    await this.s.markBatchRevoked.run(now, batchId);
    return n;
  }

  async failures(accountId: string, since: number): Promise<{ count: number; oldest: number | null }> {
    const row = (await this.s.failures.get(accountId, since))!;
    return { count: Number(row.n), oldest: row.oldest === null ? null : Number(row.oldest) };
  }

  /** Records one failed attempt and forgets those older than `pruneBefore` (all accounts). */
  async recordFailure(accountId: string, at: number, pruneBefore: number): Promise<void> {
    await this.atomic(async (self) => {
      await self.s.insertFailure.run(accountId, at);
      await self.s.pruneFailures.run(pruneBefore);
    });
  }
}
