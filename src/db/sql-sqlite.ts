import type { Database, Statement } from "bun:sqlite";
import { Rollups } from "./rollups.ts";
import {
  type Committed,
  type ConstraintKind,
  cachePut,
  countStatement,
  DURABLE_NOW,
  type EarlyCommitSql,
  insideOwnTx,
  openTransaction,
  runAfterCommit,
  type Sql,
  SqlConstraintError,
  SqlNestingError,
  type SqlParam,
  SqlTxEndedError,
  type TxScope,
} from "./sql.ts";
import { WalSync } from "./wal-sync.ts";

/**
 * The `Sql` port over one bun:sqlite connection (opened by `openDatabase`: safeIntegers, strict
 * bindings, WAL). Statements are prepared once and cached per query string.
 *
 * `tx` is BEGIN IMMEDIATE .. COMMIT. Because the connection is shared and a transaction's body
 * awaits, an async mutex keeps every other statement off the connection while a transaction is
 * open: a statement issued outside it waits (FIFO, behind the transaction) and so never sees or
 * joins uncommitted work; transactions run one at a time, as SQLite's single writer does anyway.
 * Nested `tx.tx` is a SAVEPOINT. A body that uses this root instead of its tx handle would wait for
 * itself for ever: that is refused at once with SqlNestingError.
 *
 * Code that writes on the same connection WITHOUT this executor (`db.transaction`, direct
 * statements) must not run while one of its transactions is open: bun:sqlite would nest it as a
 * savepoint of ours. The server's stores all run through one SqliteSql per connection.
 *
 * Overhead, measured with scripts/sql-overhead.ts (bun 1.4.5, this 2-core machine shared with other
 * work, :memory:, sequential and uncontended, median of 3 runs of 200k statements; the direct call
 * not awaited, the port's awaited): a primary-key `get` 0.49 us direct vs 0.67 us here (+0.18 us:
 * the promise and its await), an UPDATE `run` 1.00 vs 1.18 us (+0.18 us), a transaction of one
 * UPDATE 1.24 us with `db.transaction(fn).immediate()` vs 1.93 us with `tx` (+0.7 us, 0.1 of it the
 * AsyncLocalStorage scope that turns a self-deadlock into SqlNestingError). On a WAL
 * file the commit dominates (20-35 us per transaction, either way). For scale: PostgresSql on
 * loopback takes ~80 us per `get` and ~340 us per one-statement `tx` (three round trips).
 *
 * Durability: on a WAL file, every write (a transaction that wrote, or a writing statement outside
 * one) resolves only after the WAL is synced (WalSync: fdatasync on the thread pool, shared by every
 * commit made while one is in flight), so an acknowledged write survives power loss as with
 * `synchronous = FULL`, without stalling the event loop for the sync. The connection itself is set
 * to NORMAL (SQLite no longer syncs inside COMMIT); every other connection keeps openDatabase's FULL.
 * Other requests may read a commit before its sync completes; its own caller is answered after.
 */
export class SqliteSql implements EarlyCommitSql {
  readonly dialect = "sqlite" as const;
  readonly #core: Core;
  /** The WAL's syncer; null for :memory: and non-WAL databases (SQLite's own pragma applies). */
  readonly walSync: WalSync | null;

  constructor(db: Database) {
    this.#core = new Core(db);
    this.walSync = walSyncFor(db);
  }

  all<T>(query: string, params: readonly SqlParam[] = []): Promise<T[]> {
    const c = this.#core;
    const p = c.busy ? c.queued(() => c.all<T>(query, params)) : settle(() => c.all<T>(query, params));
    return this.walSync && isWrite(query) ? this.#durable(p) : p;
  }

  get<T>(query: string, params: readonly SqlParam[] = []): Promise<T | null> {
    const c = this.#core;
    const p = c.busy ? c.queued(() => c.get<T>(query, params)) : settle(() => c.get<T>(query, params));
    return this.walSync && isWrite(query) ? this.#durable(p) : p;
  }

  run(query: string, params: readonly SqlParam[] = []): Promise<{ changes: number }> {
    const c = this.#core;
    const p = c.busy ? c.queued(() => c.run(query, params)) : settle(() => c.run(query, params));
    return this.walSync && isWrite(query) ? this.#durable(p) : p;
  }

  /** An autocommitted write's result, once the WAL holding it is synced. */
  async #durable<R>(p: Promise<R>): Promise<R> {
    const result = await p;
    await this.walSync!.sync();
    return result;
  }

  async tx<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    const committed = await this.txCommitted(fn);
    await committed.durable;
    return committed.value;
  }

  /**
   * `tx`, resolved at the COMMIT: `durable` is the WAL sync that makes it survive power loss
   * (shared with the commits made meanwhile). The after-commit hooks (wake-ups that let others act
   * on the change: /run answers, webhooks) run once it is durable, like every answer.
   * `foldRollups`: the rollup deltas of the body (src/db/rollups.ts) are summed per row and written
   * just before the COMMIT, one upsert per row (GroupCommit's batches).
   */
  async txCommitted<T>(
    fn: (tx: Sql) => Promise<T>,
    options?: { foldRollups?: boolean },
  ): Promise<Committed<T>> {
    const c = this.#core;
    if (c.busy && insideOwnTx(c)) throw new SqlNestingError();
    await c.lock();
    const scope: TxScope = { root: c, open: true, afterCommit: [] };
    let result: T;
    let wrote: boolean;
    try {
      c.exec("BEGIN IMMEDIATE");
      c.wrote = false;
      const tx = new SqliteTx(c, 1, options?.foldRollups ? new Rollups() : null);
      try {
        result = await openTransaction.run(scope, fn, tx);
        if (tx.rollups) await tx.rollups.write(tx);
      } catch (err) {
        tx.ended = true;
        c.rollback("ROLLBACK");
        throw err;
      }
      tx.ended = true;
      try {
        c.exec("COMMIT");
      } catch (err) {
        c.rollback("ROLLBACK");
        throw err;
      }
      wrote = c.wrote;
    } finally {
      scope.open = false;
      c.unlock();
    }
    // After the lock is handed on: the next transactions commit while this sync runs.
    const durable = wrote && this.walSync ? this.walSync.sync() : DURABLE_NOW;
    // Registered before any caller awaits `durable`, so the hooks run before the callers resume.
    durable.then(
      () => runAfterCommit(scope),
      () => {}, // not durable: no hints (the caller sees the error)
    );
    return { value: result, durable };
  }

  /** Finalizes the cached statements (the connection itself belongs to whoever opened it). */
  close(): void {
    this.#core.clear();
    this.walSync?.close();
  }
}

/**
 * A syncer for a file database in WAL mode, whose connection then stops syncing inside COMMIT
 * (NORMAL); null otherwise (:memory:, another journal mode, or a connection inside a transaction:
 * its own level applies, FULL when openDatabase opened it).
 */
function walSyncFor(db: Database): WalSync | null {
  if (!db.filename || db.filename === ":memory:") return null;
  // The level cannot change inside a transaction (migrate-data wraps its source in one): the
  // connection's own level (openDatabase's FULL) then applies.
  if (db.inTransaction) return null;
  const mode = db.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get();
  if (mode?.journal_mode !== "wal") return null;
  db.exec("PRAGMA synchronous = NORMAL");
  return new WalSync(`${db.filename}-wal`);
}

/**
 * Statements that may change the database (DML with or without RETURNING, a WITH that may lead to
 * one, DDL); SELECT and PRAGMA reads (the principal cache's data_version check on every request)
 * never wait for a sync.
 */
const WRITE = /^\s*(insert|update|delete|replace|with|create|drop|alter)\b/i;
function isWrite(query: string): boolean {
  return WRITE.test(query);
}

/** The handle given to a transaction's body: runs on the connection directly (it holds the lock). */
class SqliteTx implements Sql {
  readonly dialect = "sqlite" as const;
  ended = false;

  constructor(
    private readonly core: Core,
    private readonly depth: number,
    /** Its own rollup deltas (a savepoint's, merged into the parent's on RELEASE); null: none folded. */
    readonly rollups: Rollups | null,
  ) {}

  all<T>(query: string, params: readonly SqlParam[] = []): Promise<T[]> {
    if (this.ended) return Promise.reject(new SqlTxEndedError());
    if (!this.core.wrote && isWrite(query)) this.core.wrote = true;
    return settle(() => this.core.all<T>(query, params));
  }

  get<T>(query: string, params: readonly SqlParam[] = []): Promise<T | null> {
    if (this.ended) return Promise.reject(new SqlTxEndedError());
    if (!this.core.wrote && isWrite(query)) this.core.wrote = true;
    return settle(() => this.core.get<T>(query, params));
  }

  run(query: string, params: readonly SqlParam[] = []): Promise<{ changes: number }> {
    if (this.ended) return Promise.reject(new SqlTxEndedError());
    this.core.wrote = true;
    return settle(() => this.core.run(query, params));
  }

  async tx<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    if (this.ended) throw new SqlTxEndedError();
    const name = `gengate_sp${this.depth}`;
    this.core.exec(`SAVEPOINT ${name}`);
    const inner = new SqliteTx(this.core, this.depth + 1, this.rollups ? new Rollups() : null);
    // Its afterCommit calls are kept apart and join the transaction's only if it is released.
    const outer = openTransaction.getStore();
    const scope = outer && { root: outer.root, open: true, afterCommit: [] as (() => void)[] };
    let result: T;
    try {
      result = scope ? await openTransaction.run(scope, fn, inner) : await fn(inner);
    } catch (err) {
      inner.ended = true;
      if (scope) scope.open = false;
      this.core.rollback(`ROLLBACK TO ${name}`, `RELEASE ${name}`);
      throw err; // its rollup deltas and afterCommit calls are dropped with it
    }
    inner.ended = true;
    this.core.exec(`RELEASE ${name}`);
    if (inner.rollups) this.rollups!.absorb(inner.rollups);
    if (scope) {
      scope.open = false;
      outer!.afterCommit.push(...scope.afterCommit);
    }
    return result;
  }
}

/** The connection, its statement cache and the transaction lock, shared by the root and its txs. */
class Core {
  busy = false;
  /** Whether the open transaction ran a statement that may write (its commit then needs a sync). */
  wrote = false;
  readonly #waiters: (() => void)[] = [];
  readonly #statements = new Map<string, Statement>();

  constructor(readonly db: Database) {}

  #prepare(query: string): Statement {
    return (
      this.#statements.get(query) ??
      cachePut(this.#statements, query, this.db.prepare(query), (s) => s.finalize())
    );
  }

  all<T>(query: string, params: readonly SqlParam[]): T[] {
    countStatement("statements", query);
    return this.#prepare(query).all(...(params as SqlParam[])) as T[];
  }

  get<T>(query: string, params: readonly SqlParam[]): T | null {
    countStatement("statements", query);
    return (this.#prepare(query).get(...(params as SqlParam[])) as T | null) ?? null;
  }

  run(query: string, params: readonly SqlParam[]): { changes: number } {
    countStatement("statements", query);
    return { changes: this.#prepare(query).run(...(params as SqlParam[])).changes };
  }

  /** One transaction-control statement (prepared once: BEGIN/COMMIT are on every transaction's path). */
  exec(text: string): void {
    countStatement("control", text);
    runMapped(() => this.#prepare(text).run());
  }

  /** Rolls back after a failed body; a rollback that fails too (connection gone) must not mask it. */
  rollback(...statements: string[]): void {
    for (const text of statements) {
      countStatement("control", text);
      try {
        this.#prepare(text).run();
      } catch {
        // SQLite may already have rolled the transaction back itself (e.g. SQLITE_FULL).
      }
    }
  }

  lock(): Promise<void> {
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Hands the lock to the next waiter (FIFO) or frees it. */
  unlock(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.busy = false;
  }

  /** A statement outside any transaction while one is open: waits its turn. */
  async queued<R>(fn: () => R): Promise<R> {
    if (insideOwnTx(this)) throw new SqlNestingError();
    await this.lock();
    try {
      return runMapped(fn);
    } finally {
      this.unlock();
    }
  }

  clear(): void {
    for (const s of this.#statements.values()) s.finalize();
    this.#statements.clear();
  }
}

function runMapped<R>(fn: () => R): R {
  try {
    return fn();
  } catch (err) {
    throw mapSqliteError(err);
  }
}

/** Runs a synchronous statement as a settled promise (errors mapped, never thrown synchronously). */
function settle<R>(fn: () => R): Promise<R> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    return Promise.reject(mapSqliteError(err));
  }
}

const SQLITE_KINDS: Record<string, ConstraintKind> = {
  SQLITE_CONSTRAINT_UNIQUE: "unique",
  SQLITE_CONSTRAINT_PRIMARYKEY: "unique",
  SQLITE_CONSTRAINT_CHECK: "check",
  SQLITE_CONSTRAINT_FOREIGNKEY: "foreign_key",
  SQLITE_CONSTRAINT_NOTNULL: "not_null",
};

/** A constraint failure becomes a SqlConstraintError; anything else is passed on unchanged. */
export function mapSqliteError(err: unknown): unknown {
  const code = (err as { code?: unknown })?.code;
  const kind = typeof code === "string" ? SQLITE_KINDS[code] : undefined;
  if (!kind) return err;
  return new SqlConstraintError(kind, (err as Error).message, null, { cause: err });
}
