import type { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { ApiError } from "../http/errors.ts";
import { nextTurn } from "../lib/next-turn.ts";

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
const PURGE_BATCH = 1000;
/** One batch of the purge, through the created_at index (exported for the query-plan test). */
export const PURGE_SQL = `DELETE FROM idempotency WHERE (key_id, idem_key) IN
  (SELECT key_id, idem_key FROM idempotency WHERE created_at < ? LIMIT ${PURGE_BATCH})`;
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

export interface StoredResponse {
  status: number;
  body: string;
}

/** JSON with object keys sorted at every depth: equal bodies give equal text whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export function fingerprint(method: string, pathAndQuery: string, body: unknown): string {
  return createHash("sha256")
    .update(`${method}\n${pathAndQuery}\n${canonicalJson(body)}`)
    .digest("hex");
}

/**
 * Idempotency-Key, scoped to the API key, kept 24 hours, storing only 2xx answers.
 * Short operations (a queue submit, an upload record) run `begin`, their work and `finish` in one
 * IMMEDIATE transaction, so two identical requests racing each other produce exactly one effect:
 * the second waits for the first's commit and replays it. Long operations (/run, chat) mark the
 * key `running` first; a duplicate arriving meanwhile is 409 idempotency_conflict.
 */
export class IdempotencyStore {
  private readonly s;

  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {
    this.s = {
      get: db.prepare<
        {
          fingerprint: string;
          state: string;
          status: bigint | null;
          body: string | null;
          created_at: bigint;
        },
        [string, string]
      >(
        "SELECT fingerprint, state, status, body, created_at FROM idempotency WHERE key_id = ? AND idem_key = ?",
      ),
      del: db.prepare("DELETE FROM idempotency WHERE key_id = ? AND idem_key = ?"),
      insert: db.prepare(
        "INSERT INTO idempotency (key_id, idem_key, fingerprint, state, status, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ),
      done: db.prepare(
        "UPDATE idempotency SET state = 'done', status = ?, body = ? WHERE key_id = ? AND idem_key = ?",
      ),
      purge: db.prepare(PURGE_SQL),
    };
  }

  static validateKey(key: string): void {
    if (!KEY_SHAPE.test(key)) {
      throw new ApiError("validation_error", "Idempotency-Key must be 1-255 visible ASCII characters.", {
        param: "Idempotency-Key",
      });
    }
  }

  /**
   * Looks the key up (call inside the caller's transaction). Returns the stored answer to replay,
   * or null when the operation should run. Throws 409 on another body or a still-running first try.
   */
  lookup(keyId: string, idemKey: string, fp: string): StoredResponse | null {
    const row = this.s.get.get(keyId, idemKey);
    if (!row) return null;
    if (Number(row.created_at) < this.now() - IDEMPOTENCY_TTL_MS) {
      this.s.del.run(keyId, idemKey);
      return null;
    }
    if (row.fingerprint !== fp) {
      throw new ApiError(
        "idempotency_conflict",
        "This Idempotency-Key was used with a different request (method, path, query or body).",
        { param: "Idempotency-Key" },
      );
    }
    if (row.state === "running") {
      throw new ApiError(
        "idempotency_conflict",
        "A request with this Idempotency-Key is still in progress; retry later.",
        {
          param: "Idempotency-Key",
          headers: { "retry-after": "1" },
        },
      );
    }
    return { status: Number(row.status), body: row.body ?? "" };
  }

  /** Stores a finished 2xx answer (inside the same transaction as the work, for short operations). */
  store(keyId: string, idemKey: string, fp: string, response: StoredResponse): void {
    this.s.del.run(keyId, idemKey);
    this.s.insert.run(keyId, idemKey, fp, "done", response.status, response.body, this.now());
  }

  /** Long operations: claim the key before the work (its own transaction). */
  markRunning(keyId: string, idemKey: string, fp: string): StoredResponse | null {
    return this.db
      .transaction(() => {
        const replay = this.lookup(keyId, idemKey, fp);
        if (replay) return replay;
        this.s.insert.run(keyId, idemKey, fp, "running", null, null, this.now());
        return null;
      })
      .immediate();
  }

  /** Long operations: a 2xx answer is kept; anything else frees the key for a retry. */
  settleRunning(keyId: string, idemKey: string, response: StoredResponse | null): void {
    if (response && response.status >= 200 && response.status < 300) {
      this.s.done.run(response.status, response.body, keyId, idemKey);
    } else {
      this.s.del.run(keyId, idemKey);
    }
  }

  /**
   * Deletes keys older than the TTL, in batches through the created_at index, yielding to the event
   * loop between batches so a day of keys never stalls requests. Returns how many were deleted.
   */
  async purgeExpired(): Promise<number> {
    const before = this.now() - IDEMPOTENCY_TTL_MS;
    let total = 0;
    for (;;) {
      const n = this.s.purge.run(before).changes;
      total += n;
      if (n < PURGE_BATCH) return total;
      await nextTurn();
    }
  }
}
