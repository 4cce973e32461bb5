import { afterCommit, type Sql } from "../db/sql.ts";
import { SqlStore } from "../db/store.ts";
import type { StoredOutput } from "../files/output-store.ts";
import type { Ledger } from "../ledger/ledger.ts";
import { errorFields, log } from "../lib/log.ts";
import type { JobEvents } from "./events.ts";
import { QueueIndex } from "./queue-index.ts";

export type JobStatus = "IN_QUEUE" | "IN_PROGRESS" | "COMPLETED" | "FAILED" | "CANCELLED";
export const FINAL_STATUSES: readonly JobStatus[] = ["COMPLETED", "FAILED", "CANCELLED"];

export interface JobRow {
  id: string;
  seq: bigint;
  account_id: string;
  key_id: string | null;
  /** The signed-in person who opened a studio job (null for API jobs). */
  person_id: string | null;
  model_id: string;
  kind: string;
  source: "API" | "STUDIO";
  provider: string;
  status: JobStatus;
  input: string;
  quote: string;
  hold_id: string;
  webhook_url: string | null;
  upstream_id: string | null;
  attempt: bigint;
  lease_owner: string | null;
  lease_until: bigint | null;
  not_before: bigint;
  deadline_at: bigint;
  output: string | null;
  actual_units: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: bigint;
  started_at: bigint | null;
  completed_at: bigint | null;
}

export interface NewJob {
  id: string;
  accountId: string;
  keyId: string | null;
  /** A studio job's person: counted in people.open_jobs while the job is open. */
  personId?: string | null;
  modelId: string;
  kind: string;
  source: "API" | "STUDIO";
  provider: string;
  input: string;
  quote: string;
  holdId: string;
  webhookUrl: string | null;
  deadlineAt: number;
  createdAt: number;
  /**
   * Work the request itself performs (chat calls): the job starts IN_PROGRESS, owned by the
   * request, with its lease running to this time (its deadline), and no worker ever claims it.
   */
  runningUntil?: number;
}

/** The lease owner of jobs run inside their own HTTP request. */
const REQUEST_OWNER = "request";

/** A stored output as recorded with its job (the output store wrote its bytes). */
export type OutputRow = StoredOutput;

/** A stored output as downloads read it, with the account of its job. */
export interface OutputFileRow {
  path: string;
  content_type: string;
  size: bigint;
  sha256: string;
  account_id: string;
}

/**
 * The sweeps' queries. They read the partial indexes of open jobs (jobs_running,
 * jobs_open_deadline) and are sorted in memory: an ORDER BY seq made SQLite walk the seq index over
 * every job ever recorded, every 10 seconds.
 */
export const SWEEP_SQL = {
  expiredLeases:
    "SELECT * FROM jobs WHERE status = 'IN_PROGRESS' AND (lease_until IS NULL OR lease_until < ?)",
  pastDeadline: "SELECT * FROM jobs WHERE status IN ('IN_QUEUE', 'IN_PROGRESS') AND deadline_at < ?",
} as const;

/** ` FOR UPDATE` on PostgreSQL (a row read to decide a write); SQLite does not parse it. */
function forUpdate(sql: Sql): string {
  return sql.dialect === "postgres" ? " FOR UPDATE" : "";
}

/**
 * The values of a JSON array parameter as a sub-select (`?N` when numbered): SQLite's json_each,
 * PostgreSQL's jsonb_array_elements_text. A list of any length in one prepared statement.
 */
function jsonList(sql: Sql, n?: number): string {
  const p = n === undefined ? "?" : `?${n}`;
  return sql.dialect === "postgres"
    ? // The parameter typed text: typed jsonb, Bun.sql would send the string as a JSON string.
      `SELECT value FROM jsonb_array_elements_text(CAST(CAST(${p} AS TEXT) AS jsonb))`
    : `SELECT value FROM json_each(${p})`;
}

/** How old the queue index may get on PostgreSQL before a position read refreshes it. */
const INDEX_REFRESH_MS = 1000;

const bySeq = (rows: JobRow[]) => rows.sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));

/** Runs inside the transaction that moved a job to a final state (webhook outbox, ...). */
export type FinalStateHook = (tx: Sql, job: JobRow) => Promise<void> | void;

/**
 * The job state machine, enforced here and nowhere else. Every transition is a compare-and-swap
 * on the current status (UPDATE ... WHERE status = <expected>), and every final state commits in
 * the same transaction as its settlement (charge or release of the job's hold) and its hooks, so
 * no job is settled twice or ends without a settlement. Listeners are told after the commit.
 */
export class JobStore extends SqlStore {
  /** The last sequence number given (shared by every view of this store). */
  private readonly seq: { last: bigint | null } = { last: null };
  private readonly index = new QueueIndex([]);
  /** When the index was last read from the database (PostgreSQL), shared by every view. */
  private readonly indexRead: { at: number; reading: boolean; root: JobStore } = {
    at: 0,
    reading: false,
    root: this,
  };
  /** The queue index, read once at start (createAppContext waits for it). */
  private readonly ready: Promise<void>;

  /**
   * The lease owner of a job that runs inside its HTTP request (a chat call). The server names
   * its instance here (`request@<instance>/<pid>-<time>`, src/queue/background.ts), so a restart's
   * recovery knows its earlier life's calls, which died with that process.
   */
  requestOwner = REQUEST_OWNER;

  constructor(
    sql: Sql,
    private ledger: Ledger,
    private readonly events: JobEvents,
    private readonly finalHooks: FinalStateHook[] = [],
  ) {
    super(sql);
    this.ready = this.load().then(() => undefined);
  }

  private async load(): Promise<void> {
    for (const row of await this.s.queued.all()) this.index.add(row);
  }

  /** Resolves once the store read its sequence and queue index (at start). */
  whenReady(): Promise<void> {
    return this.ready;
  }

  /** The lease this view's writes are fenced by (see `fenced`); null: unfenced. */
  private fence: { owner: string; attempt: bigint } | null = null;

  /**
   * This store with every later write of a claimed job (complete, fail, requeue, setUpstreamId)
   * fenced by its lease: they change nothing once the job was re-claimed by another attempt.
   */
  fenced(owner: string, attempt: bigint): this {
    const view = Object.create(this) as this;
    view.fence = { owner, attempt };
    // Its transaction views are its own (the cache of the unfenced store must not return them).
    (view as unknown as { views: WeakMap<Sql, SqlStore> }).views = new WeakMap();
    return view;
  }

  protected override bound(tx: Sql): void {
    this.ledger = this.ledger.in(tx);
  }

  protected override s = {
    insert: this.q(
      `INSERT INTO jobs (id, seq, account_id, key_id, model_id, kind, source, provider, status, input, quote,
           hold_id, webhook_url, deadline_at, created_at, attempt, lease_owner, lease_until, started_at, person_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    // PostgreSQL: seq from the column's identity sequence (migration 017), shared by every instance.
    insertPg: this.q<{ seq: bigint }>(
      `INSERT INTO jobs (id, account_id, key_id, model_id, kind, source, provider, status, input, quote,
           hold_id, webhook_url, deadline_at, created_at, attempt, lease_owner, lease_until, started_at, person_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
    ),
    get: this.q<JobRow, [string]>("SELECT * FROM jobs WHERE id = ?"),
    getOwned: this.q<JobRow, [string, string]>("SELECT * FROM jobs WHERE id = ? AND account_id = ?"),
    // PostgreSQL (READ COMMITTED): the counter's row is locked when read inside the opening
    // transaction, so concurrent opens cannot both pass the in-flight cap (SQLite: one writer).
    openForKey: this.q<{ n: bigint }, [string]>(
      `SELECT open_jobs AS n FROM api_keys WHERE id = ?${forUpdate(this.sql)}`,
    ),
    addOpen: this.q("UPDATE api_keys SET open_jobs = open_jobs + ? WHERE id = ?"),
    openForPerson: this.q<{ n: bigint }, [string]>(
      `SELECT open_jobs AS n FROM people WHERE id = ?${forUpdate(this.sql)}`,
    ),
    addPersonOpen: this.q("UPDATE people SET open_jobs = open_jobs + ? WHERE id = ?"),
    byPerson: this.q<JobRow, [string, string, string, number]>(
      `SELECT * FROM jobs WHERE person_id = ? AND id < ? AND account_id = ? ORDER BY id DESC LIMIT ?`,
    ),
    queued: this.q<{ provider: string; model_id: string; seq: bigint }, []>(
      "SELECT provider, model_id, seq FROM jobs WHERE status = 'IN_QUEUE'",
    ),
    // SQLite (one writer at a time): the candidates of a batch claim, read inside its transaction.
    // A capped model's oldest runnable jobs, up to its remaining cap ...
    nextOfModel: this.q<JobRow, [string, number, string, number]>(
      `SELECT * FROM jobs WHERE status = 'IN_QUEUE' AND provider = ? AND not_before <= ? AND model_id = ?
         ORDER BY seq LIMIT ?`,
    ),
    // ... and the oldest runnable jobs of every other model.
    nextUncapped: this.q<JobRow, [string, number, string, number]>(
      `SELECT * FROM jobs WHERE status = 'IN_QUEUE' AND provider = ? AND not_before <= ?
           AND model_id NOT IN (${jsonList(this.sql)})
         ORDER BY seq LIMIT ?`,
    ),
    // PostgreSQL: a batch claim in one statement. Per capped model (?6, a JSON object model ->
    // remaining cap) its oldest runnable jobs up to that remaining cap, and the oldest of every
    // other model, each `FOR UPDATE SKIP LOCKED` (concurrent claimers, of any instance, take other
    // rows instead of waiting); of those the k (?7) oldest. PostgreSQL re-checks only the outer
    // WHERE on a row a concurrent claim changed, so the claimable status is repeated there.
    // (A locking clause is refused on a UNION branch itself, hence the sub-selects in FROM.)
    claimBatchPg: this.q<JobRow, [string, number, number, string, number, string, number]>(
      `WITH caps AS (
           SELECT key AS model_id, CAST(value AS integer) AS n
             FROM jsonb_each_text(CAST(CAST(?6 AS TEXT) AS jsonb))),
         candidates AS (
           SELECT j.id, j.seq FROM caps CROSS JOIN LATERAL (
               SELECT id, seq FROM jobs
                 WHERE status = 'IN_QUEUE' AND provider = ?4 AND not_before <= ?5 AND model_id = caps.model_id
                 ORDER BY seq LIMIT caps.n FOR UPDATE SKIP LOCKED) j
           UNION ALL
           SELECT u.id, u.seq FROM (
               SELECT id, seq FROM jobs
                 WHERE status = 'IN_QUEUE' AND provider = ?4 AND not_before <= ?5
                   AND model_id NOT IN (SELECT model_id FROM caps)
                 ORDER BY seq LIMIT ?7 FOR UPDATE SKIP LOCKED) u),
         chosen AS (SELECT id FROM candidates ORDER BY seq LIMIT ?7)
       UPDATE jobs SET status = 'IN_PROGRESS', attempt = attempt + 1, lease_owner = ?1, lease_until = ?2,
           started_at = coalesce(started_at, ?3)
         WHERE id IN (SELECT id FROM chosen) AND status = 'IN_QUEUE' AND provider = ?4
         RETURNING *`,
    ),
    claim: this.q<JobRow, [string, number, number, string]>(
      `UPDATE jobs SET status = 'IN_PROGRESS', attempt = attempt + 1, lease_owner = ?1, lease_until = ?2,
           started_at = coalesce(started_at, ?3)
         WHERE id = ?4 AND status = 'IN_QUEUE' RETURNING *`,
    ),
    renew: this.q(
      "UPDATE jobs SET lease_until = ? WHERE id = ? AND status = 'IN_PROGRESS' AND lease_owner = ?",
    ),
    // The writes a worker makes to its claimed job carry the lease's fencing token (owner and
    // attempt; null when unfenced: recovery, cancel, chat calls): a worker whose lease lapsed and
    // whose job was claimed again changes nothing (docs/scale-out.md "Concurrency review").
    setUpstream: this.q<null, [string, string, string | null, bigint | null]>(
      `UPDATE jobs SET upstream_id = ?1 WHERE id = ?2 AND status = 'IN_PROGRESS' AND (CAST(?3 AS TEXT) IS NULL OR (lease_owner = ?3 AND attempt = ?4))`,
    ),
    toFinal: this.q<
      JobRow,
      [
        string,
        string | null,
        string | null,
        string | null,
        string | null,
        number,
        string,
        string,
        string | null,
        bigint | null,
      ]
    >(
      `UPDATE jobs SET status = ?1, output = ?2, actual_units = ?3, error_code = ?4, error_message = ?5,
           completed_at = ?6, lease_owner = NULL, lease_until = NULL
         WHERE id = ?7 AND status IN (${jsonList(this.sql, 8)}) AND (CAST(?9 AS TEXT) IS NULL OR (lease_owner = ?9 AND attempt = ?10)) RETURNING *`,
    ),
    requeue: this.q<JobRow, [number, string, string | null, bigint | null]>(
      `UPDATE jobs SET status = 'IN_QUEUE', not_before = ?1, lease_owner = NULL, lease_until = NULL
         WHERE id = ?2 AND status = 'IN_PROGRESS' AND (CAST(?3 AS TEXT) IS NULL OR (lease_owner = ?3 AND attempt = ?4)) RETURNING *`,
    ),
    expiredLeases: this.q<JobRow, [number]>(SWEEP_SQL.expiredLeases),
    leasedBy: this.q<JobRow, [number, string]>(
      "SELECT * FROM jobs WHERE status = 'IN_PROGRESS' AND substr(lease_owner, 1, CAST(? AS INTEGER)) = ?",
    ),
    pastDeadline: this.q<JobRow, [number]>(SWEEP_SQL.pastDeadline),
    insertOutput: this.q(
      `INSERT INTO job_outputs (job_id, idx, path, content_type, size, sha256, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    outputIndexes: this.q<{ idx: bigint }, [string]>(
      "SELECT idx FROM job_outputs WHERE job_id = ? ORDER BY idx",
    ),
    outputFile: this.q<OutputFileRow, [string, number]>(
      `SELECT o.path, o.content_type, o.size, o.sha256, j.account_id FROM job_outputs o JOIN jobs j ON j.id = o.job_id
         WHERE o.job_id = ? AND o.idx = ?`,
    ),
    // The cap is one conditional UPDATE: concurrent downloads cannot overshoot it.
    countDownload: this.q<{ downloads: bigint }, [string, number, number]>(
      "UPDATE job_outputs SET downloads = downloads + 1 WHERE job_id = ? AND idx = ? AND downloads < ? RETURNING downloads",
    ),
    expiredOutputs: this.q<{ job_id: string; idx: bigint; path: string }, [number, number]>(
      "SELECT job_id, idx, path FROM job_outputs WHERE expires_at < ? LIMIT ?",
    ),
    deleteOutput: this.q("DELETE FROM job_outputs WHERE job_id = ? AND idx = ?"),
    logCount: this.q<{ n: bigint }, [string]>("SELECT count(*) AS n FROM job_logs WHERE job_id = ?"),
    // ON CONFLICT: two writers of one job's log (a worker and recovery, a cancel) may count the same
    // line number; the loser counts again (appendLog).
    insertLog: this.q(
      "INSERT INTO job_logs (job_id, n, at, level, message) VALUES (?, ?, ?, ?, ?) ON CONFLICT (job_id, n) DO NOTHING",
    ),
    // A worker's log line, fenced like its other writes: nothing once its lease was taken over.
    insertLogFenced: this.q<null, [string, bigint, number, string, string, string, bigint]>(
      `INSERT INTO job_logs (job_id, n, at, level, message)
         SELECT CAST(?1 AS TEXT), CAST(?2 AS BIGINT), CAST(?3 AS BIGINT), CAST(?4 AS TEXT), CAST(?5 AS TEXT)
         WHERE EXISTS (SELECT 1 FROM jobs WHERE id = ?1 AND status = 'IN_PROGRESS' AND lease_owner = ?6 AND attempt = ?7)
         ON CONFLICT (job_id, n) DO NOTHING`,
    ),
    logs: this.q<{ at: bigint; level: string; message: string }, [string]>(
      "SELECT at, level, message FROM job_logs WHERE job_id = ? ORDER BY n",
    ),
    maxSeq: this.q<{ s: bigint | null }, []>("SELECT max(seq) AS s FROM jobs"),
    lastJobAt: this.q<{ created_at: bigint }, [string]>(
      "SELECT created_at FROM jobs WHERE key_id = ? ORDER BY id DESC LIMIT 1",
    ),
    outputRows: this.q<{ idx: bigint; content_type: string; size: bigint; expires_at: bigint }, [string]>(
      "SELECT idx, content_type, size, expires_at FROM job_outputs WHERE job_id = ? ORDER BY idx",
    ),
  };

  /** Call after the submit transaction committed: the job is now visible in the queue. */
  markQueued(job: JobRow): void {
    if (job.status === "IN_QUEUE") this.index.add(job);
  }

  /**
   * Inserts a queued job (or, with `runningUntil`, one its request runs). Call inside the submit
   * transaction, after the hold was placed.
   */
  async insert(j: NewJob): Promise<JobRow> {
    const running = j.runningUntil !== undefined;
    const values = [
      j.accountId,
      j.keyId,
      j.modelId,
      j.kind,
      j.source,
      j.provider,
      running ? "IN_PROGRESS" : "IN_QUEUE",
      j.input,
      j.quote,
      j.holdId,
      j.webhookUrl,
      j.deadlineAt,
      j.createdAt,
      running ? 1 : 0,
      running ? this.requestOwner : null,
      j.runningUntil ?? null,
      running ? j.createdAt : null,
      j.personId ?? null,
    ] as const;
    let seq: bigint;
    if (this.sql.dialect === "postgres") {
      // Several instances insert jobs: the database's sequence numbers them.
      seq = (await this.s.insertPg.get(j.id, ...values))!.seq;
    } else {
      // SQLite has one instance (the server), so the next number is kept in memory. Read on first
      // use through this store's own Sql (the caller's transaction when bound): waiting for a read
      // on the root from inside a transaction would wait for that transaction itself.
      if (this.seq.last === null) {
        const max = (await this.s.maxSeq.get())?.s ?? 0n;
        this.seq.last ??= max;
      }
      seq = ++this.seq.last;
      await this.s.insert.run(j.id, seq, ...values);
    }
    if (j.keyId) await this.s.addOpen.run(1, j.keyId);
    if (j.personId) await this.s.addPersonOpen.run(1, j.personId);
    return {
      id: j.id,
      seq,
      account_id: j.accountId,
      key_id: j.keyId,
      person_id: j.personId ?? null,
      model_id: j.modelId,
      kind: j.kind,
      source: j.source,
      provider: j.provider,
      status: running ? "IN_PROGRESS" : "IN_QUEUE",
      input: j.input,
      quote: j.quote,
      hold_id: j.holdId,
      webhook_url: j.webhookUrl,
      upstream_id: null,
      attempt: running ? 1n : 0n,
      lease_owner: running ? this.requestOwner : null,
      lease_until: running ? BigInt(j.runningUntil!) : null,
      not_before: 0n,
      deadline_at: BigInt(j.deadlineAt),
      output: null,
      actual_units: null,
      error_code: null,
      error_message: null,
      created_at: BigInt(j.createdAt),
      started_at: running ? BigInt(j.createdAt) : null,
      completed_at: null,
    };
  }

  async get(id: string): Promise<JobRow | null> {
    return await this.s.get.get(id);
  }

  /** A job of this account, or null: another account's job is indistinguishable from none. */
  async getOwned(id: string, accountId: string): Promise<JobRow | null> {
    return await this.s.getOwned.get(id, accountId);
  }

  async openForKey(keyId: string): Promise<number> {
    return Number((await this.s.openForKey.get(keyId))?.n ?? 0n);
  }

  /** A person's open studio jobs (people.open_jobs), over every account. */
  async openForPerson(personId: string): Promise<number> {
    return Number((await this.s.openForPerson.get(personId))?.n ?? 0n);
  }

  /**
   * A person's studio jobs in one account, newest first (index jobs_by_person); `before` is the
   * id of the previous page's last job.
   */
  async listByPerson(
    accountId: string,
    personId: string,
    limit: number,
    before: string | null,
  ): Promise<JobRow[]> {
    return await this.s.byPerson.all(personId, before ?? "~", accountId, limit);
  }

  /**
   * 0-based position among queued jobs of the same model, live at each read. On PostgreSQL other
   * instances queue and claim jobs too: the index is re-read from the database in the background
   * when it is over a second old, so a position is at most about a second stale.
   */
  queuePosition(job: JobRow): number | null {
    if (job.status !== "IN_QUEUE") return null;
    if (this.sql.dialect === "postgres") this.refreshIndexSoon();
    return this.index.position(job);
  }

  private refreshIndexSoon(): void {
    const r = this.indexRead;
    if (r.reading || Date.now() - r.at < INDEX_REFRESH_MS) return;
    r.reading = true;
    // Through the root, once any transaction this call is inside has ended.
    afterCommit(() => {
      void r.root.s.queued
        .all()
        .then((rows) => {
          this.index.reset(rows);
          r.at = Date.now();
        })
        .catch((err) => log("warn", "queue index refresh failed", errorFields(err)))
        .finally(() => {
          r.reading = false;
        });
    });
  }

  /** Claims the oldest runnable job of a provider, skipping `busyModels` (see claimBatch). */
  async claimNext(
    provider: string,
    busyModels: string[],
    owner: string,
    leaseMs: number,
    now: number,
  ): Promise<JobRow | null> {
    const caps = new Map(busyModels.map((m) => [m, 0]));
    return (await this.claimBatch(provider, 1, caps, owner, leaseMs, now))[0] ?? null;
  }

  /**
   * Claims up to `limit` runnable jobs of a provider in queue order (seq), each with its own lease
   * (owner, attempt + 1): at most `caps.get(m)` jobs of a model `m` in `caps` (its remaining
   * concurrency; 0 skips it), any number of the others. One statement on PostgreSQL, where
   * concurrent claimers (of any instance) take disjoint jobs; one transaction on SQLite. Returned
   * oldest first.
   */
  async claimBatch(
    provider: string,
    limit: number,
    caps: ReadonlyMap<string, number>,
    owner: string,
    leaseMs: number,
    now: number,
  ): Promise<JobRow[]> {
    if (limit <= 0) return [];
    const claimed =
      this.sql.dialect === "postgres"
        ? await this.s.claimBatchPg.all(
            owner,
            now + leaseMs,
            now,
            provider,
            now,
            JSON.stringify(Object.fromEntries([...caps].map(([m, n]) => [m, Math.max(0, n)]))),
            limit,
          )
        : // SQLite: one writer at a time, so the jobs read here are still queued below.
          await this.atomic(async (self) => {
            const candidates = await self.s.nextUncapped.all(
              provider,
              now,
              JSON.stringify([...caps.keys()]),
              limit,
            );
            for (const [model, n] of caps)
              if (n > 0)
                candidates.push(...(await self.s.nextOfModel.all(provider, now, model, Math.min(n, limit))));
            const out: JobRow[] = [];
            for (const next of bySeq(candidates).slice(0, limit)) {
              const row = await self.s.claim.get(owner, now + leaseMs, now, next.id);
              if (row) out.push(row);
            }
            return out;
          });
    bySeq(claimed); // RETURNING order is unspecified
    for (const job of claimed) {
      this.index.remove(job);
      this.events.changed(job.id);
    }
    return claimed;
  }

  async renewLease(id: string, owner: string, until: number): Promise<boolean> {
    return (await this.s.renew.run(until, id, owner)).changes === 1;
  }

  async setUpstreamId(id: string, upstreamId: string): Promise<void> {
    await this.s.setUpstream.run(upstreamId, id, this.fence?.owner ?? null, this.fence?.attempt ?? null);
  }

  /**
   * IN_PROGRESS -> COMPLETED: outputs recorded, hold settled at `chargeUsdMicro` (capped at the
   * hold by the ledger), hooks run, all in one transaction. False if the job was not IN_PROGRESS.
   */
  async complete(
    id: string,
    output: unknown,
    outputs: OutputRow[],
    chargeUsdMicro: bigint,
    actualUnits: string | null,
    outputTtlMs: number,
    now: number,
  ): Promise<boolean> {
    const job = await this.atomic(async (self) => {
      const row = await self.s.toFinal.get(
        "COMPLETED",
        JSON.stringify(output),
        actualUnits,
        null,
        null,
        now,
        id,
        '["IN_PROGRESS"]',
        self.fence?.owner ?? null,
        self.fence?.attempt ?? null,
      );
      if (!row) return null;
      if (row.key_id) await self.s.addOpen.run(-1, row.key_id);
      if (row.person_id) await self.s.addPersonOpen.run(-1, row.person_id);
      for (const o of outputs) {
        await self.s.insertOutput.run(
          id,
          o.idx,
          o.path,
          o.contentType,
          o.size,
          o.sha256,
          now,
          now + outputTtlMs,
        );
      }
      await self.ledger.settle(row.hold_id, chargeUsdMicro);
      for (const hook of self.finalHooks) await hook(self.sql, row);
      return row;
    });
    if (job) this.events.changed(id);
    return job !== null;
  }

  /** IN_QUEUE|IN_PROGRESS -> FAILED, releasing the hold (nothing charged). */
  async fail(id: string, code: string, message: string, now: number): Promise<boolean> {
    return await this.finish(id, "FAILED", ["IN_QUEUE", "IN_PROGRESS"], code, message, now);
  }

  /** IN_QUEUE -> CANCELLED, releasing the hold. False if the job had left IN_QUEUE. */
  async cancel(id: string, now: number): Promise<boolean> {
    return await this.finish(id, "CANCELLED", ["IN_QUEUE"], null, null, now);
  }

  private async finish(
    id: string,
    to: JobStatus,
    from: JobStatus[],
    code: string | null,
    message: string | null,
    now: number,
  ): Promise<boolean> {
    const job = await this.atomic(async (self) => {
      const row = await self.s.toFinal.get(
        to,
        null,
        null,
        code,
        message,
        now,
        id,
        JSON.stringify(from),
        self.fence?.owner ?? null,
        self.fence?.attempt ?? null,
      );
      if (!row) return null;
      if (row.key_id) await self.s.addOpen.run(-1, row.key_id);
      if (row.person_id) await self.s.addPersonOpen.run(-1, row.person_id);
      await self.ledger.release(row.hold_id, code ?? to.toLowerCase());
      for (const hook of self.finalHooks) await hook(self.sql, row);
      return row;
    });
    if (job) {
      this.index.remove(job);
      this.events.changed(id);
    }
    return job !== null;
  }

  /** IN_PROGRESS -> IN_QUEUE, runnable again at `notBefore` (capacity back-off, recovery). */
  async requeue(id: string, notBefore: number): Promise<boolean> {
    const row = await this.s.requeue.get(
      notBefore,
      id,
      this.fence?.owner ?? null,
      this.fence?.attempt ?? null,
    );
    if (row) {
      this.index.add(row);
      this.events.changed(id);
      this.events.newWork(row.provider);
    }
    return row !== null;
  }

  /** Running jobs whose lease lapsed, oldest submit first. */
  async expiredLeases(now: number): Promise<JobRow[]> {
    return bySeq(await this.s.expiredLeases.all(now));
  }

  /** Running jobs whose lease owner starts with `prefix` (an instance's earlier life), oldest first. */
  async leasedBy(prefix: string): Promise<JobRow[]> {
    return bySeq(await this.s.leasedBy.all(prefix.length, prefix));
  }

  /** Open jobs past their model's time limit, oldest submit first. */
  async pastDeadline(now: number): Promise<JobRow[]> {
    return bySeq(await this.s.pastDeadline.all(now));
  }

  /**
   * Newest first; `before` is the id (UUIDv7, time-ordered) of the previous page's last job.
   * Filtered by key, the walk uses jobs_by_key (migration 010); otherwise jobs_account.
   */
  async list(
    accountId: string,
    o: {
      limit: number;
      before: string | null;
      status?: string;
      modelId?: string;
      keyId?: string;
      source?: "API" | "STUDIO";
    },
  ): Promise<JobRow[]> {
    const where = ["account_id = ?", "id < ?"];
    const args: (string | number)[] = [accountId, o.before ?? "~"];
    const filter = (column: string, value: string | undefined) => {
      if (!value) return;
      where.push(`${column} = ?`);
      args.push(value);
    };
    filter("status", o.status);
    filter("model_id", o.modelId);
    filter("key_id", o.keyId);
    filter("source", o.source);
    args.push(o.limit);
    return await this.q<JobRow, (string | number)[]>(
      `SELECT * FROM jobs WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT ?`,
    ).all(...args);
  }

  /** When the key last opened a job (a request or a chat call), epoch ms; null if never. */
  async lastJobAt(keyId: string): Promise<bigint | null> {
    return (await this.s.lastJobAt.get(keyId))?.created_at ?? null;
  }

  /** A job's stored outputs in index order: what each is, for previews (links come from the views). */
  async outputRows(
    jobId: string,
  ): Promise<{ idx: bigint; content_type: string; size: bigint; expires_at: bigint }[]> {
    return await this.s.outputRows.all(jobId);
  }

  /**
   * One log line, numbered after the job's last. Line numbers are counted, then inserted: when
   * another writer of the same job took the number meanwhile (a worker and start-up recovery, or a
   * cancel), the insert does nothing and the line is counted again. A fenced writer whose lease was
   * taken over writes nothing.
   */
  async appendLog(id: string, level: string, message: string, now: number): Promise<void> {
    const text = message.slice(0, 2000);
    for (let tries = 0; tries < 8; tries++) {
      const n = (await this.s.logCount.get(id))!.n;
      if (n >= 1000n) return; // bounded: a chatty provider must not grow a job's logs without end
      const { changes } = this.fence
        ? await this.s.insertLogFenced.run(id, n, now, level, text, this.fence.owner, this.fence.attempt)
        : await this.s.insertLog.run(id, n, now, level, text);
      if (changes > 0) return;
      // Fenced and nothing written: the lease is gone, unless a rival took the number.
      if (this.fence && (await this.s.logCount.get(id))!.n === n) return;
    }
  }

  async logs(id: string) {
    return await this.s.logs.all(id);
  }

  /** The indexes of a job's stored outputs, in order. */
  async outputIndexes(jobId: string): Promise<number[]> {
    return (await this.s.outputIndexes.all(jobId)).map(({ idx }) => Number(idx));
  }

  /** One stored output with the account of its job, or null. */
  async outputFile(jobId: string, idx: number): Promise<OutputFileRow | null> {
    return await this.s.outputFile.get(jobId, idx);
  }

  /** Counts one full download unless the output already reached `cap`; false when it had. */
  async countDownload(jobId: string, idx: number, cap: number): Promise<boolean> {
    return (await this.s.countDownload.get(jobId, idx, cap)) !== null;
  }

  /** Up to `limit` outputs past their retention (the caller deletes them and their bytes). */
  async expiredOutputs(now: number, limit: number): Promise<{ job_id: string; idx: bigint; path: string }[]> {
    return await this.s.expiredOutputs.all(now, limit);
  }

  async deleteOutput(jobId: string, idx: bigint): Promise<void> {
    await this.s.deleteOutput.run(jobId, idx);
  }
}
