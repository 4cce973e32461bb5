import type { Sql } from "../db/sql.ts";
import { SqlStore } from "../db/store.ts";
import { DomainError, type RateLimitState } from "../lib/errors.ts";

/**
 * Writes per key per minute, in fixed one-minute windows aligned to the key's first write.
 * Reads and status polls never come here.
 * Headers follow the IETF RateLimit draft (structured fields):
 *   RateLimit-Policy: "writes";q=120;w=60   RateLimit: "writes";r=37;t=23
 *
 * Two implementations with the same answers: in memory (`WriteRateLimiter`: SQLite, one instance
 * serves the API, the fastest) and in the database (`SqlWriteRateLimiter`: PostgreSQL, so a client
 * spraying writes over several instances is counted once, as by one instance).
 */
export interface WriteRateLimit {
  /** Counts one write; throws rate_limited when over. Returns the window's state (for RateLimit headers). */
  hit(keyId: string, limit: number): RateLimitState | Promise<RateLimitState>;
}

const WINDOW_MS = 60_000;

/** The window's state after a write counted as `count` (over the limit: refused). */
function answer(limit: number, windowStart: number, count: number, now: number): RateLimitState {
  const reset = Math.max(1, Math.ceil((windowStart + WINDOW_MS - now) / 1000));
  const state = (remaining: number): RateLimitState => ({
    policy: "writes",
    limit,
    windowSeconds: 60,
    remaining,
    resetSeconds: reset,
  });
  if (count > limit) {
    throw new DomainError(
      "rate_limited",
      `Too many writes for this key: ${limit} per minute. Retry in ${reset} s.`,
      { retryAfterSeconds: reset, rateLimit: state(0) },
    );
  }
  return state(limit - count);
}

/** In memory: one process serves the API (SQLite). */
export class WriteRateLimiter implements WriteRateLimit {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  hit(keyId: string, limit: number): RateLimitState {
    const now = this.now();
    let w = this.windows.get(keyId);
    if (!w || now - w.start >= WINDOW_MS) {
      w = { start: now, count: 0 };
      this.windows.set(keyId, w);
      if (this.windows.size > 100_000) this.prune(now);
    }
    // Past the limit the count stops at limit + 1 (as in the database, which must tell a refused
    // write from the one that reached the limit).
    if (w.count <= limit) w.count++;
    return answer(limit, w.start, w.count, now);
  }

  private prune(now: number): void {
    for (const [k, w] of this.windows) if (now - w.start >= WINDOW_MS) this.windows.delete(k);
  }
}

/**
 * In the database (table write_rate_windows, migration 017): one conditional upsert per write,
 * which PostgreSQL applies atomically on the key's row (a concurrent write on another instance
 * waits for the row and sees its count), so the count is exact across instances. A window older
 * than a minute restarts at this write; past the limit the count stops at limit + 1 (refused).
 * Times come from the instance's clock: instances' clocks should agree to well under a second.
 */
export class SqlWriteRateLimiter extends SqlStore implements WriteRateLimit {
  protected override s = {
    hit: this.q<{ window_start: bigint; count: bigint }, [string, number, number]>(
      `INSERT INTO write_rate_windows (key_id, window_start, count) VALUES (?1, ?2, 1)
         ON CONFLICT (key_id) DO UPDATE SET
           window_start = CASE WHEN write_rate_windows.window_start <= CAST(?2 AS BIGINT) - ${WINDOW_MS}
             THEN CAST(?2 AS BIGINT) ELSE write_rate_windows.window_start END,
           count = CASE WHEN write_rate_windows.window_start <= CAST(?2 AS BIGINT) - ${WINDOW_MS} THEN 1
             WHEN write_rate_windows.count > CAST(?3 AS BIGINT) THEN write_rate_windows.count
             ELSE write_rate_windows.count + 1 END
         RETURNING window_start, count`,
    ),
  };

  constructor(
    sql: Sql,
    private readonly now: () => number = Date.now,
  ) {
    super(sql);
  }

  async hit(keyId: string, limit: number): Promise<RateLimitState> {
    const now = this.now();
    const row = (await this.s.hit.get(keyId, now, limit))!;
    return answer(limit, Number(row.window_start), Number(row.count), now);
  }
}

/** The limiter for a database: in the database on PostgreSQL (several instances), else in memory. */
export function writeRateLimiter(sql: Sql): WriteRateLimit {
  return sql.dialect === "postgres" ? new SqlWriteRateLimiter(sql) : new WriteRateLimiter();
}
