import { afterCommit, nullIfChecked, type Sql } from "../db/sql.ts";
import { jsonList, SqlStore } from "../db/store.ts";
import type { JobOutputStore, OutputRow } from "../files/job-output-store.ts";
import type { Ledger, WithLocks } from "../ledger/ledger.ts";
import type { JobEvents } from "./events.ts";
import { type JobFilter, jobFilterSql, jobListIndexHint } from "./job-filter.ts";
import { type JobRow, type JobStatus, type LeaseFence, type NewJob, openedJobRow } from "./job-row.ts";
import { JobStatsStore } from "./job-stats-store.ts";
import { LiveQueueIndex } from "./queue-index.ts";

/** The lease owner of jobs run inside their own HTTP request. */
const REQUEST_OWNER = "request";

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

/** A fenced write's last two parameters: the lease's owner and attempt, or nulls (unfenced). */
type FenceParams = [owner: string | null, attempt: bigint | null];

const bySeq = (rows: JobRow[]) => rows.sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));

/** What a final state writes besides the status (cost: jobs.cost_usd_micro, null = unknown). */
type Ending = {
  output: string | null;
  actualUnits: string | null;
  code: string | null;
  message: string | null;
  cost: bigint | null;
};

/** Runs inside the transaction that moved a job to a final state (webhook outbox, ...). */
export type FinalStateHook = (tx: Sql, job: JobRow) => Promise<void> | void;

/** What a JobStore writes through in a final state's transaction, and whom it tells after. */
export interface JobStoreDeps {
  /** Settles or releases a job's hold (re-bound to the transaction, `bound`). */
  ledger: Ledger;
  /** Records a completed job's outputs (re-bound to the transaction, `bound`). */
  outputs: JobOutputStore;
  /** Told after each commit that changed a job. */
  events: JobEvents;
  finalHooks?: FinalStateHook[];
  /**
   * Told after the commit of each completion: the job as completed (its route's provider and its
   * cost) and the charge in USD micro-units (the metrics' revenue and cost per route).
   */
  onCompleted?: (job: JobRow, chargeUsdMicro: bigint) => void;
}

/**
 * The job state machine, enforced here and nowhere else. Every transition is a compare-and-swap
 * on the current status (UPDATE ... WHERE status = <expected>), and every final state commits in
 * the same transaction as its settlement (charge or release of the job's hold) and its hooks, so
 * no job is settled twice or ends without a settlement. Listeners are told after the commit.
 * A job's log lines are JobLogStore's (job-log-store.ts); its outputs and their downloads
 * JobOutputStore's (src/files/job-output-store.ts), recorded here through it when the job completes.
 */
export class JobStore extends SqlStore {
  /** The last sequence number given (shared by every view of this store). */
  private readonly seq: { last: bigint | null } = { last: null };
  /** Live queue positions, shared by every view; read once at start (createAppContext waits for it). */
  private readonly index: LiveQueueIndex;
  private ledger: Ledger;
  private outputs: JobOutputStore;
  /** The Requests figures' rollup (migration 028), counted in each final state's transaction. */
  private stats: JobStatsStore;
  private readonly events: JobEvents;
  private readonly finalHooks: FinalStateHook[];
  private readonly onCompleted: JobStoreDeps["onCompleted"];

  /**
   * The lease owner of a job that runs inside its HTTP request (a chat call). The server names
   * its instance here (`request@<instance>/<pid>-<time>`, src/app/background.ts), so a restart's
   * recovery knows its earlier life's calls, which died with that process.
   */
  requestOwner = REQUEST_OWNER;

  constructor(sql: Sql, deps: JobStoreDeps) {
    super(sql);
    this.ledger = deps.ledger;
    this.outputs = deps.outputs;
    this.stats = new JobStatsStore(sql);
    this.events = deps.events;
    this.finalHooks = deps.finalHooks ?? [];
    this.onCompleted = deps.onCompleted;
    // Read through the root store's statements, never a view's transaction.
    this.index = new LiveQueueIndex(
      async () => await this.s.queued.all(),
      sql.dialect === "postgres",
      afterCommit,
    );
  }

  /** Resolves once the store read its queue index (at start). */
  whenReady(): Promise<void> {
    return this.index.ready;
  }

  /** The lease this view's writes are fenced by (see `fenced`); null: unfenced. */
  private fence: LeaseFence | null = null;

  /**
   * This store with every later write of a claimed job (complete, fail, requeue, setUpstreamId)
   * fenced by its lease: they change nothing once the job was re-claimed by another attempt.
   */
  fenced(owner: string, attempt: bigint): this {
    const view = this.variant();
    view.fence = { owner, attempt };
    return view;
  }

  private fenceParams(): FenceParams {
    return [this.fence?.owner ?? null, this.fence?.attempt ?? null];
  }

  protected override bound(tx: Sql): void {
    this.ledger = this.ledger.in(tx);
    this.outputs = this.outputs.in(tx);
    this.stats = this.stats.in(tx);
  }

  protected override s = {
    insert: this.q(
      `INSERT INTO jobs (id, seq, account_id, key_id, model_id, kind, source, provider, status, input, quote,
           hold_id, webhook_url, deadline_at, created_at, attempt, lease_owner, lease_until, started_at, person_id,
           webhook_body, route)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    // PostgreSQL: seq from the column's identity sequence (migration 017), shared by every instance.
    insertPg: this.q<{ seq: bigint }>(
      `INSERT INTO jobs (id, account_id, key_id, model_id, kind, source, provider, status, input, quote,
           hold_id, webhook_url, deadline_at, created_at, attempt, lease_owner, lease_until, started_at, person_id,
           webhook_body, route)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
    ),
    get: this.q<JobRow, [string]>("SELECT * FROM jobs WHERE id = ?"),
    getOwned: this.q<JobRow, [string, string]>("SELECT * FROM jobs WHERE id = ? AND account_id = ?"),
    addOpen: this.q("UPDATE api_keys SET open_jobs = open_jobs + ? WHERE id = ?"),
    // At the cap: -1, which CHECK (open_jobs >= 0) refuses, so a COMMIT sent behind it rolls back.
    takeKeySlot: this.q(
      "UPDATE api_keys SET open_jobs = CASE WHEN open_jobs < ?2 THEN open_jobs + 1 ELSE -1 END WHERE id = ?1",
    ),
    takePersonSlot: this.q(
      "UPDATE people SET open_jobs = CASE WHEN open_jobs < ?2 THEN open_jobs + 1 ELSE -1 END WHERE id = ?1",
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
    setUpstream: this.q<null, [string, string, ...FenceParams]>(
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
        ...FenceParams,
        bigint | null,
      ]
    >(
      `UPDATE jobs SET status = ?1, output = ?2, actual_units = ?3, error_code = ?4, error_message = ?5,
           completed_at = ?6, lease_owner = NULL, lease_until = NULL, cost_usd_micro = ?11
         WHERE id = ?7 AND status IN (${jsonList(this.sql, 8)}) AND (CAST(?9 AS TEXT) IS NULL OR (lease_owner = ?9 AND attempt = ?10)) RETURNING *`,
    ),
    // A chat call's route, when an earlier one refused it before its first byte.
    setRoute: this.q<null, [string, number, string]>(
      "UPDATE jobs SET provider = ?1, route = ?2 WHERE id = ?3 AND status = 'IN_PROGRESS' AND upstream_id IS NULL",
    ),
    // With a route (?5..?7: a refused submit's move, workers.ts "fallback") only while no upstream
    // holds the job (upstream_id null), so an accepted job can never be moved.
    requeue: this.q<JobRow, [number, string, ...FenceParams, string | null, number | null, number | null]>(
      `UPDATE jobs SET status = 'IN_QUEUE', not_before = ?1, lease_owner = NULL, lease_until = NULL,
           provider = coalesce(CAST(?5 AS TEXT), provider), route = coalesce(CAST(?6 AS BIGINT), route),
           route_tries = coalesce(CAST(?7 AS BIGINT), route_tries)
         WHERE id = ?2 AND status = 'IN_PROGRESS' AND (CAST(?3 AS TEXT) IS NULL OR (lease_owner = ?3 AND attempt = ?4))
           AND (CAST(?5 AS TEXT) IS NULL OR upstream_id IS NULL) RETURNING *`,
    ),
    expiredLeases: this.q<JobRow, [number]>(SWEEP_SQL.expiredLeases),
    leasedBy: this.q<JobRow, [number, string]>(
      "SELECT * FROM jobs WHERE status = 'IN_PROGRESS' AND substr(lease_owner, 1, CAST(? AS INTEGER)) = ?",
    ),
    pastDeadline: this.q<JobRow, [number]>(SWEEP_SQL.pastDeadline),
    maxSeq: this.q<{ s: bigint | null }, []>("SELECT max(seq) AS s FROM jobs"),
    lastJobAt: this.q<{ created_at: bigint }, [string]>(
      "SELECT created_at FROM jobs WHERE key_id = ? ORDER BY id DESC LIMIT 1",
    ),
  };

  /** Call after the submit transaction committed: the job is now visible in the queue. */
  markQueued(job: JobRow): void {
    if (job.status === "IN_QUEUE") this.index.add(job);
  }

  /**
   * Inserts a queued job (or, with `runningUntil`, one its request runs). Call inside the submit
   * transaction, after the hold was placed (or, with `slotTaken`, its insert sent).
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
      j.webhookBody ?? "record",
      j.route ?? 0,
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
    if (!j.slotTaken) await this.countOpen(j.keyId, j.personId ?? null, 1);
    return openedJobRow(j, seq, running ? this.requestOwner : null);
  }

  async get(id: string): Promise<JobRow | null> {
    return await this.s.get.get(id);
  }

  /** A job of this account, or null: another account's job is indistinguishable from none. */
  async getOwned(id: string, accountId: string): Promise<JobRow | null> {
    return await this.s.getOwned.get(id, accountId);
  }

  /** One more open job for its opener (key, or keyless person) below `max`; false at the cap. */
  async takeSlot(keyId: string | null, personId: string | null, max: number): Promise<boolean> {
    const s = keyId !== null ? this.s.takeKeySlot.run(keyId, max) : this.s.takePersonSlot.run(personId!, max);
    return (await s.catch(nullIfChecked))?.changes === 1;
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
    return job.status === "IN_QUEUE" ? this.index.position(job) : null;
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
    await this.s.setUpstream.run(upstreamId, id, ...this.fenceParams());
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
    /** What the job cost upstream (src/pricing/cost.ts), written by the same UPDATE; null = unknown. */
    cost: bigint | null = null,
  ): Promise<boolean> {
    const ending = { output: JSON.stringify(output), actualUnits, code: null, message: null, cost };
    const job = await this.toFinal(id, "COMPLETED", ["IN_PROGRESS"], ending, now, async (self, row, open) => {
      await Promise.all([
        self.outputs.record(id, outputs, now, now + outputTtlMs),
        self.ledger.settle(row.hold_id, chargeUsdMicro, open, true),
      ]);
      const told = self.onCompleted;
      // The charge is the delivery's price, never above the quote (= the hold's USD), so it is the revenue.
      if (told) afterCommit(() => told(row, chargeUsdMicro));
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
    // A cancelled job never left the queue: no upstream saw it (0). A failed one may have run
    // upstream and be billed there, for what we cannot know: unknown (null). docs/money.md.
    const ending = { output: null, actualUnits: null, code, message, cost: to === "CANCELLED" ? 0n : null };
    const job = await this.toFinal(id, to, from, ending, now, async (self, row, open) => {
      await self.ledger.release(row.hold_id, code ?? to.toLowerCase(), open, true);
    });
    if (job) {
      this.index.remove(job);
      this.events.changed(id);
    }
    return job !== null;
  }

  /**
   * One final state in one transaction: the compare-and-swap from `from`, the open-job counters and figures,
   * `settle` (the hold settled or released, outputs recorded) and the final-state hooks. Null
   * (nothing written) when the job was not in `from`, or the fence's lease was taken over.
   */
  private async toFinal(
    id: string,
    to: JobStatus,
    from: JobStatus[],
    e: Ending,
    now: number,
    settle: (self: this, row: JobRow, open: WithLocks) => Promise<void>,
  ): Promise<JobRow | null> {
    return await this.atomic(async (self) => {
      const row = await self.s.toFinal.get(
        to,
        e.output,
        e.actualUnits,
        e.code,
        e.message,
        now,
        id,
        JSON.stringify(from),
        ...self.fenceParams(),
        e.cost,
      );
      if (!row) return null;
      // The hooks first: the ledger's last round may carry the COMMIT (Ledger.settle, `last`).
      for (const hook of self.finalHooks) await hook(self.sql, row);
      // The counters (job_stats_daily too), once: by the ledger in its round (WithLocks), else here.
      let counting: Promise<unknown> | null = null;
      const open = async () => {
        counting ??= Promise.all([self.countOpen(row.key_id, row.person_id, -1), self.stats.count(row)]);
        await counting;
      };
      await settle(self, row, open);
      await open();
      return row;
    });
  }

  /** Moves the open-job counters of a job's key and person (api_keys, people) by `delta`. */
  private async countOpen(keyId: string | null, personId: string | null, delta: number): Promise<void> {
    const key = keyId && this.s.addOpen.run(delta, keyId); // both sent at once (Ledger.settle's COMMIT)
    await Promise.all([key, personId && this.s.addPersonOpen.run(delta, personId)]);
  }

  /**
   * IN_PROGRESS -> IN_QUEUE, runnable again at `notBefore` (capacity back-off, recovery); with `to`,
   * on that route after its route refused it before accepting it (false once an upstream id is recorded).
   */
  async requeue(
    id: string,
    notBefore: number,
    to?: { provider: string; route: number; tries: number },
  ): Promise<boolean> {
    const row = await this.s.requeue.get(
      notBefore,
      id,
      ...this.fenceParams(),
      to?.provider ?? null,
      to?.route ?? null,
      to?.tries ?? null,
    );
    if (row) {
      this.index.add(row);
      this.events.changed(id);
      this.events.newWork(row.provider);
    }
    return row !== null;
  }

  /** Records the route a chat call runs on (its first route refused it before the first byte). */
  async setRoute(id: string, provider: string, route: number): Promise<void> {
    await this.s.setRoute.run(provider, route, id);
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
   * Newest first; `before` is the id (UUIDv7, time-ordered) of the previous page's last job (or a
   * period's end). Filtered by key, the walk uses jobs_by_key (migration 010); otherwise jobs_account;
   * across accounts (accountId null: the operator's Requests page) the primary key, or jobs_by_model
   * (migration 023) by model; one account's jobs of one model, jobs_account_model (migration 029).
   * The filters are jobFilterSql's (job-filter.ts), which JobStatsStore counts with.
   */
  async list(
    /** null: every account. */
    accountId: string | null,
    o: Omit<JobFilter, "accountId" | "after" | "before"> & {
      limit: number;
      before: string | null;
      /** "asc": oldest first, and `before` is then the id the page starts after. */
      order?: "asc" | "desc";
    },
  ): Promise<JobRow[]> {
    const asc = o.order === "asc";
    const f = { ...o, accountId, before: asc ? null : o.before, after: asc ? o.before : null };
    const { where, args } = jobFilterSql(f);
    return await this.q<JobRow, (string | number)[]>(
      `SELECT * FROM jobs${jobListIndexHint(this.sql.dialect, f)} WHERE ${where} ORDER BY id ${asc ? "ASC" : "DESC"} LIMIT ?`,
    ).all(...args, o.limit);
  }

  /** When the key last opened a job (a request or a chat call), epoch ms; null if never. */
  async lastJobAt(keyId: string): Promise<bigint | null> {
    return (await this.s.lastJobAt.get(keyId))?.created_at ?? null;
  }
}
