import { createHash } from "node:crypto";
import { hostname } from "node:os";
import { type ReservedSQL, SQL } from "bun";
import type { DatabaseSettings } from "../config/schema.ts";
import { errorFields, log } from "../lib/log.ts";
import type { Sql } from "./sql.ts";
import { bunSqlOptions } from "./sql-postgres.ts";

/**
 * One instance at a time for periodic work (sweeps, purges, expiries): docs/scale-out.md "Across
 * instances". A name ("queue-sweep") is led by at most one instance; `run(name, fn)` runs fn only
 * there and tells the others to skip their turn.
 *
 * Leadership keeps instances from doing the same work at the same time; it is not what makes the
 * work correct. A leader that stalls (a long GC pause, a frozen VM) can overlap briefly with its
 * successor, so the work itself stays safe when run twice (conditional statements, fenced leases),
 * and a long run checks `signal` between batches: it is aborted when leadership is lost.
 */
export interface Leadership {
  /**
   * Runs `fn` if this instance leads `name`, and resolves true once it finished; resolves false
   * without running it when another instance leads or a run of `name` is still going here. The
   * first call for a name campaigns for it (one attempt, awaited); the campaign then goes on in the
   * background. Errors from fn are rethrown.
   */
  run(name: string, fn: (signal: AbortSignal) => unknown): Promise<boolean>;
  /** Campaigns for `name` (see run) without running anything; resolves whether this instance leads it. */
  campaign(name: string): Promise<boolean>;
  /** Whether this instance leads `name` now (false for a name never campaigned for). */
  isLeader(name: string): boolean;
  /** Calls fn(name, leading) each time this instance gains or loses a name. */
  onChange(fn: (name: string, leading: boolean) => void): () => void;
  /** Aborts the runs going on, waits for them, and gives every name up (another instance takes it). */
  close(): Promise<void>;
}

interface Term {
  leading: boolean;
  /** Aborted when this term of leadership ends. */
  controller: AbortController;
}

/** What both implementations share: terms per name, runs, change listeners. */
abstract class Terms implements Leadership {
  protected readonly terms = new Map<string, Term>();
  protected closed = false;
  readonly #running = new Map<string, Promise<unknown>>();
  readonly #listeners = new Set<(name: string, leading: boolean) => void>();

  abstract campaign(name: string): Promise<boolean>;

  isLeader(name: string): boolean {
    return this.terms.get(name)?.leading ?? false;
  }

  async run(name: string, fn: (signal: AbortSignal) => unknown): Promise<boolean> {
    if (!this.terms.has(name)) await this.campaign(name);
    const term = this.terms.get(name);
    if (this.closed || !term?.leading || this.#running.has(name)) return false;
    const running = (async () => fn(term.controller.signal))();
    this.#running.set(name, running);
    try {
      await running;
    } finally {
      this.#running.delete(name);
    }
    return true;
  }

  onChange(fn: (name: string, leading: boolean) => void): () => void {
    this.#listeners.add(fn);
    return () => void this.#listeners.delete(fn);
  }

  protected setLeading(name: string, leading: boolean): void {
    const term = this.terms.get(name);
    if (!term || term.leading === leading || (leading && this.closed)) return;
    if (leading) term.controller = new AbortController();
    else term.controller.abort(new Error(`leadership of ${name} lost`));
    term.leading = leading;
    for (const fn of [...this.#listeners]) {
      try {
        fn(name, leading);
      } catch (err) {
        log("error", "leadership listener failed", { name, ...errorFields(err) });
      }
    }
  }

  /** Ends every term and waits for the runs going on (they saw their signal aborted). */
  protected async endTerms(): Promise<void> {
    this.closed = true;
    for (const name of this.terms.keys()) this.setLeading(name, false);
    await Promise.allSettled(this.#running.values());
  }

  abstract close(): Promise<void>;
}

/** One instance (SQLite): it leads every name. */
export class LocalLeadership extends Terms {
  async campaign(name: string): Promise<boolean> {
    if (this.closed) return false;
    if (!this.terms.has(name)) {
      this.terms.set(name, { leading: false, controller: new AbortController() });
      this.setLeading(name, true);
    }
    return true;
  }

  async close(): Promise<void> {
    await this.endTerms();
  }
}

export interface PostgresLeadershipOptions {
  settings: { url: string; password: string | null };
  /** How often a follower tries to take a name, and the leader checks its session (default 2 s). */
  retryMs?: number;
  /** A check that takes longer counts as a lost session (default 3 s). */
  checkTimeoutMs?: number;
  /** Shown as the session's application_name ("gengate-leader <instance>"); default host:pid. */
  instance?: string;
}

/**
 * Session advisory locks (`pg_try_advisory_lock`), one per name, all held by ONE dedicated session
 * (a reserved connection of the leadership's own Bun.sql client). PostgreSQL releases a session's
 * advisory locks when the session ends, so an instance that dies, even by kill -9, frees its names:
 * the kernel closes its socket, the server ends the session at once, and the next follower's
 * attempt (every `retryMs`) takes them. Measured here (test/db/leader.test.ts, 3 processes, retry
 * every 2 s): hand-over after a SIGKILL between 24 ms and 1.94 s, i.e. within retryMs plus a round trip.
 *
 * Every `retryMs` the leadership runs one query on its session: the names it does not hold are
 * tried, and the session's health is checked. A failed or slow check (over `checkTimeoutMs`) or
 * the connection closing (Bun's `onclose`, at once) ends every term and closes the session, so the
 * server releases what it still held; the next round opens a new session and campaigns again.
 *
 * A host that vanishes without closing its socket (power loss, a partition) is noticed by the
 * server through TCP keepalives set on this session (idle 5 s, then 3 probes 2 s apart: about 11 s),
 * while the cut-off leader itself stops leading after at most retryMs + checkTimeoutMs (5 s): it
 * steps down before the server frees its locks.
 */
export class PostgresLeadership extends Terms {
  readonly #options: SQL.PostgresOrMySQLOptions;
  readonly #retryMs: number;
  readonly #checkTimeoutMs: number;
  #client: SQL | null = null;
  #session: ReservedSQL | null = null;
  /** Rounds run one after the other. */
  #round: Promise<void> = Promise.resolve();
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(options: PostgresLeadershipOptions) {
    super();
    const base = bunSqlOptions({ ...options.settings, maxConnections: 1 });
    this.#options = {
      ...base,
      connection: {
        ...base.connection,
        application_name: `gengate-leader ${options.instance ?? `${hostname()}:${process.pid}`}`.slice(0, 63),
        idle_session_timeout: 0,
        tcp_keepalives_idle: 5,
        tcp_keepalives_interval: 2,
        tcp_keepalives_count: 3,
      },
    };
    this.#retryMs = options.retryMs ?? 2_000;
    this.#checkTimeoutMs = options.checkTimeoutMs ?? 3_000;
    this.#timer = setInterval(() => void this.#nextRound(), this.#retryMs);
  }

  async campaign(name: string): Promise<boolean> {
    if (this.closed) return false;
    if (!this.terms.has(name)) {
      this.terms.set(name, { leading: false, controller: new AbortController() });
      await this.#nextRound();
    }
    return this.isLeader(name);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.#timer);
    await this.endTerms(); // the runs finish before the locks go, so a successor never overlaps them
    await this.#round;
    await this.#closeSession();
  }

  #nextRound(): Promise<void> {
    this.#round = this.#round.then(() => this.#roundOnce());
    return this.#round;
  }

  /** Opens the session if needed, tries the names not held, and checks the session is alive. */
  async #roundOnce(): Promise<void> {
    if (this.closed || this.terms.size === 0) return;
    try {
      const session = this.#session ?? (await this.#withTimeout(this.#open()));
      const wanted = [...this.terms].filter(([, t]) => !t.leading).map(([name]) => name);
      if (wanted.length === 0) {
        await this.#withTimeout(session.unsafe("SELECT 1"));
        return;
      }
      const rows = (await this.#withTimeout(
        session.unsafe(
          `SELECT ${wanted.map((_, i) => `pg_try_advisory_lock($${i + 1}) AS l${i}`).join(", ")}`,
          wanted.map(leadershipKey),
        ),
      )) as Record<string, boolean>[];
      if (this.#session !== session) return; // lost meanwhile (onclose)
      wanted.forEach((name, i) => {
        if (rows[0]?.[`l${i}`] === true) this.setLeading(name, true);
      });
    } catch (err) {
      if (!this.closed) log("warn", "leadership: session lost", errorFields(err));
      await this.#lose();
    }
  }

  async #open(): Promise<ReservedSQL> {
    const client = new SQL({
      ...this.#options,
      onclose: () => {
        // The connection closed (the server ended the session, the network broke): whatever this
        // session held is released by the server; stop leading now, not at the next round.
        if (this.#client === client) void this.#lose();
      },
    });
    this.#client = client;
    this.#session = await client.reserve();
    return this.#session;
  }

  /** Every term ends and the session is closed (so the server releases anything it still held). */
  async #lose(): Promise<void> {
    for (const name of this.terms.keys()) this.setLeading(name, false);
    await this.#closeSession();
  }

  async #closeSession(): Promise<void> {
    const client = this.#client;
    this.#client = null;
    this.#session = null;
    await client?.close({ timeout: 0 }).catch(() => {});
  }

  #withTimeout<T>(p: Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`leadership check took over ${this.#checkTimeoutMs} ms`)),
        this.#checkTimeoutMs,
      );
    });
    return Promise.race([p, limit]).finally(() => clearTimeout(timer));
  }

  /**
   * Which session holds `name` now: its application_name ("gengate-leader <instance>"), or null.
   * For operators and tests (any `Sql` on the same PostgreSQL database).
   */
  static async holder(sql: Sql, name: string): Promise<string | null> {
    const key = BigInt.asUintN(64, leadershipKey(name));
    const row = await sql.get<{ app: string }>(
      `SELECT a.application_name AS app FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
         AND l.classid = CAST(CAST(? AS BIGINT) AS oid) AND l.objid = CAST(CAST(? AS BIGINT) AS oid)`,
      [key >> 32n, key & 0xffffffffn],
    );
    return row?.app ?? null;
  }
}

/**
 * The advisory lock key of a name: the first 8 bytes of SHA-256("gengate.leader:" + name), as a
 * signed int8 (stable across versions and processes; apart from the migration lock's key).
 */
export function leadershipKey(name: string): bigint {
  const digest = createHash("sha256").update(`gengate.leader:${name}`).digest();
  return digest.readBigInt64BE(0);
}

/** The leadership for database_url: always the leader on SQLite, advisory locks on PostgreSQL. */
export function openLeadership(database: DatabaseSettings): Leadership {
  if (database.kind === "sqlite") return new LocalLeadership();
  return new PostgresLeadership({ settings: database });
}
