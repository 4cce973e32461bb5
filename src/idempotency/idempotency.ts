import { createHash } from "node:crypto";
import type { Sql } from "../db/sql.ts";
import { SqlStore } from "../db/store.ts";
import { DomainError } from "../lib/errors.ts";
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

/** The Idempotency-Key of one write request with the request's fingerprint. */
export interface IdempotencyClaim {
  key: string;
  fingerprint: string;
}

/** The fingerprint of a write request by the contract's one rule: method, path, query, canonical body. */
export function requestFingerprint(request: Request, body: unknown): string {
  const url = new URL(request.url);
  return fingerprint(request.method, url.pathname + url.search, body);
}

/** The request's Idempotency-Key, or null without one; 400 validation_error when malformed. */
export function idempotencyKeyOf(request: Request): string | null {
  const key = request.headers.get("idempotency-key");
  if (key !== null) IdempotencyStore.validateKey(key);
  return key;
}

/**
 * The claim of a write request: its Idempotency-Key (null without one, 400 when malformed) and its
 * fingerprint over `body` (a route whose body is not JSON passes what stands for it, e.g. an
 * upload's type and digest: see requestFingerprint).
 */
export function claimOf(request: Request, body: unknown): IdempotencyClaim | null {
  const key = idempotencyKeyOf(request);
  return key === null ? null : { key, fingerprint: requestFingerprint(request, body) };
}

/** The header line every replayed answer carries. */
export const REPLAYED_HEADER = "idempotent-replayed";

/** A stored answer sent again: its body, with `status` (the stored one unless the route says). */
export function replayResponse(
  stored: StoredResponse,
  status = stored.status,
  body = stored.body,
  contentType = "application/json",
): Response {
  return new Response(body, { status, headers: { "content-type": contentType, [REPLAYED_HEADER]: "true" } });
}

/** A short operation's outcome: the stored answer to replay, or the value its work returned. */
export type Once<T> = { replay: StoredResponse; value?: undefined } | { replay: null; value: T };

/** Settles a long operation's claimed key once its answer is known (null: it failed). */
export type SettleClaim = (response: StoredResponse | null) => Promise<void>;

/** A long operation's claim: the stored answer to replay, or how to settle the key afterwards. */
export type Running = { replay: StoredResponse; settle?: undefined } | { replay: null; settle: SettleClaim };

const NO_CLAIM: Running = { replay: null, settle: async () => {} };

/**
 * Idempotency-Key, scoped to the API key, kept 24 hours, storing only 2xx answers.
 * Short operations (a queue submit, an upload record) run `begin`, their work and `finish` in one
 * IMMEDIATE transaction, so two identical requests racing each other produce exactly one effect:
 * the second waits for the first's commit and replays it. Long operations (/run, chat) mark the
 * key `running` first; a duplicate arriving meanwhile is 409 idempotency_conflict.
 */
export class IdempotencyStore extends SqlStore {
  protected override s = {
    get: this.q<
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
    del: this.q("DELETE FROM idempotency WHERE key_id = ? AND idem_key = ?"),
    claim: this.q<null, [string, string, string, number]>(
      `INSERT INTO idempotency (key_id, idem_key, fingerprint, state, status, body, created_at)
         VALUES (?, ?, ?, 'running', NULL, NULL, ?) ON CONFLICT DO NOTHING`,
    ),
    done: this.q(
      "UPDATE idempotency SET state = 'done', status = ?, body = ? WHERE key_id = ? AND idem_key = ?",
    ),
    purge: this.q(PURGE_SQL),
  };

  constructor(
    sql: Sql,
    private readonly now: () => number = Date.now,
  ) {
    super(sql);
  }

  static validateKey(key: string): void {
    if (!KEY_SHAPE.test(key)) {
      throw new DomainError("validation_error", "Idempotency-Key must be 1-255 visible ASCII characters.", {
        param: "Idempotency-Key",
      });
    }
  }

  /**
   * Looks the key up (call inside the caller's transaction). Returns the stored answer to replay,
   * or null when the operation should run. Throws 409 on another body or a still-running first try.
   */
  async lookup(keyId: string, idemKey: string, fp: string): Promise<StoredResponse | null> {
    const row = await this.s.get.get(keyId, idemKey);
    if (!row) return null;
    if (Number(row.created_at) < this.now() - IDEMPOTENCY_TTL_MS) {
      await this.s.del.run(keyId, idemKey);
      return null;
    }
    if (row.fingerprint !== fp) {
      throw new DomainError(
        "idempotency_conflict",
        "This Idempotency-Key was used with a different request (method, path, query or body).",
        { param: "Idempotency-Key" },
      );
    }
    if (row.state === "running") {
      throw new DomainError(
        "idempotency_conflict",
        "A request with this Idempotency-Key is still in progress; retry later.",
        {
          param: "Idempotency-Key",
          retryAfterSeconds: 1,
        },
      );
    }
    return { status: Number(row.status), body: row.body ?? "" };
  }

  /**
   * Short operations (a queue submit, an upload record): call inside the work's own transaction.
   * Replays the answer stored under `claim`, or runs `work` and stores the answer `answer` makes
   * of its value, so two identical requests racing each other produce one effect. Without a claim
   * it runs `work` alone. A throw from `work` stores nothing (only 2xx answers are kept).
   */
  async once<T>(
    keyId: string,
    claim: IdempotencyClaim | null,
    work: () => T | Promise<T>,
    answer: (value: T) => StoredResponse | Promise<StoredResponse>,
  ): Promise<Once<T>> {
    if (claim === null) return { replay: null, value: await work() };
    const replay = await this.claimRow(keyId, claim.key, claim.fingerprint);
    if (replay) return { replay };
    const value = await work();
    const response = await answer(value);
    await this.s.done.run(response.status, response.body, keyId, claim.key);
    return { replay: null, value };
  }

  /**
   * Long operations (/run, chat): claims the key in its own transaction before the work. Returns
   * the stored answer to replay (a duplicate still running is 409), or `settle`, to call exactly
   * once when the answer is known: a 2xx answer is kept, anything else frees the key for a retry.
   * Without a claim, `settle` does nothing (and nothing is allocated).
   */
  async claimRunning(keyId: string, claim: IdempotencyClaim | null): Promise<Running> {
    if (claim === null) return NO_CLAIM;
    const replay = await this.markRunning(keyId, claim.key, claim.fingerprint);
    if (replay) return { replay };
    return { replay: null, settle: async (response) => await this.settleRunning(keyId, claim.key, response) };
  }

  /** Long operations: claim the key before the work (its own transaction). */
  async markRunning(keyId: string, idemKey: string, fp: string): Promise<StoredResponse | null> {
    return await this.atomic((self) => self.claimRow(keyId, idemKey, fp));
  }

  /**
   * The stored answer to replay (409 for another body or a first try still running), or null after
   * inserting this request's `running` row. The insert is `ON CONFLICT DO NOTHING`: on PostgreSQL
   * (READ COMMITTED) a concurrent identical request's uncommitted row makes it wait for that commit,
   * then insert nothing, and the lookup again finds the committed answer: exactly one runs.
   */
  private async claimRow(keyId: string, idemKey: string, fp: string): Promise<StoredResponse | null> {
    for (let i = 0; ; i++) {
      const replay = await this.lookup(keyId, idemKey, fp);
      if (replay) return replay;
      const inserted = await this.s.claim.run(keyId, idemKey, fp, this.now());
      if (inserted.changes === 1) return null;
      // The row that won was deleted meanwhile (expired, or a failed long operation freed it).
      if (i >= 2) throw new Error("idempotency: the key's row kept changing; try again");
    }
  }

  /** Long operations: a 2xx answer is kept; anything else frees the key for a retry. */
  async settleRunning(keyId: string, idemKey: string, response: StoredResponse | null): Promise<void> {
    if (response && response.status >= 200 && response.status < 300) {
      await this.s.done.run(response.status, response.body, keyId, idemKey);
    } else {
      await this.s.del.run(keyId, idemKey);
    }
  }

  /**
   * Deletes keys older than the TTL, in batches through the created_at index, yielding to the event
   * loop between batches so a day of keys never stalls requests. Returns how many were deleted.
   */
  async purgeExpired(signal?: AbortSignal): Promise<number> {
    const before = this.now() - IDEMPOTENCY_TTL_MS;
    let total = 0;
    for (;;) {
      const n = (await this.s.purge.run(before)).changes;
      total += n;
      if (n < PURGE_BATCH || signal?.aborted) return total;
      await nextTurn();
    }
  }
}
