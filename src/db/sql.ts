import { AsyncLocalStorage } from "node:async_hooks";
import type { Rollups } from "./rollups.ts";

/**
 * The SQL executor port: the one interface a store is written against, with a SQLite
 * (`sql-sqlite.ts`, over bun:sqlite) and a PostgreSQL (`sql-postgres.ts`, over Bun.sql)
 * implementation. docs/scale-out.md ("The Sql port", "Dialect differences") says how a store uses
 * it and where the two dialects differ.
 *
 * Values read back are the same in both dialects, so a row from either backend is deep-equal:
 * integers as `bigint` (also counts, 0/1 flags and integral sums), text as `string`, blobs as
 * `Uint8Array`, NULL as `null`; a non-integral number as `number`.
 */

export type Dialect = "sqlite" | "postgres";

/** A bound value. `true`/`false` are stored as 1/0 (there are no boolean columns). */
export type SqlParam = string | number | bigint | boolean | null | Uint8Array;

export interface Sql {
  readonly dialect: Dialect;
  /** All rows. Placeholders are `?` in both dialects (translated to $1.. for PostgreSQL). */
  all<T>(query: string, params?: readonly SqlParam[]): Promise<T[]>;
  /** The first row, or null. */
  get<T>(query: string, params?: readonly SqlParam[]): Promise<T | null>;
  /** Rows written by an INSERT, UPDATE or DELETE (0 for an ON CONFLICT DO NOTHING that skipped). */
  run(query: string, params?: readonly SqlParam[]): Promise<{ changes: number }>;
  /**
   * One transaction: commits when fn resolves, rolls back when it throws (rethrown).
   * Inside fn use ONLY the given tx. tx.tx(...) nests as a SAVEPOINT. A tx used after its
   * transaction ended rejects (SqlTxEndedError).
   */
  tx<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
  /**
   * The rollup deltas this transaction folds and writes before its COMMIT (src/db/rollups.ts), on
   * a SQLite group commit's transaction and its savepoints; absent or null: rollups are written at once.
   */
  readonly rollups?: Rollups | null;
  /**
   * Inside a transaction's body, on PostgreSQL: sends the COMMIT now, pipelined behind the
   * statements sent and not yet answered, and refuses any statement after it. If one of them
   * fails, the transaction is rolled back instead and the promise rejects. For a body whose last
   * statements carry every refusal themselves (a constraint that fails): code that runs on their
   * answers can no longer undo anything. Null (or absent: SQLite, whose group commit shares its
   * COMMIT) where the transaction commits when its body returns.
   */
  commitNow?(): Promise<void> | null;
}

/** A committed transaction's result, and when its write is durable (see `EarlyCommitSql`). */
export interface Committed<T> {
  value: T;
  /** Resolves once the write survives power loss; rejects if it could not be made to. */
  durable: Promise<void>;
}

/**
 * A root `Sql` whose transactions can be resolved at their COMMIT, before the commit is durable:
 * SqliteSql, whose WAL sync runs after the commit (src/db/wal-sync.ts). Nothing that depends on
 * the write may be answered before `durable` resolves; work that needs no answer (an upstream call
 * already paid for by the committed reservation) may overlap the sync. PostgreSQL's COMMIT is
 * durable when it returns, so PostgresSql has no such mode.
 */
export interface EarlyCommitSql extends Sql {
  /** `foldRollups`: the transaction folds its rollup upserts, one per row before the COMMIT (GroupCommit). */
  txCommitted<T>(fn: (tx: Sql) => Promise<T>, options?: { foldRollups?: boolean }): Promise<Committed<T>>;
}

/** The `durable` of a write that is durable when committed (PostgreSQL, :memory:, nothing written). */
export const DURABLE_NOW: Promise<void> = Promise.resolve();

export function canCommitEarly(sql: Sql): sql is EarlyCommitSql {
  return typeof (sql as Partial<EarlyCommitSql>).txCommitted === "function";
}

/** Which constraint a write broke; the same kind from either dialect. */
export type ConstraintKind = "unique" | "check" | "foreign_key" | "not_null";

/**
 * A write refused by a constraint. Stores recognise a duplicate (`kind === "unique"`) or a broken
 * invariant (`"check"`) by this class whatever the backend; `cause` is the driver's error.
 */
export class SqlConstraintError extends Error {
  override readonly name = "SqlConstraintError";
  constructor(
    readonly kind: ConstraintKind,
    message: string,
    /** PostgreSQL's constraint name; SQLite names none (its message names the columns). */
    readonly constraint: string | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A write refused by a CHECK constraint as null (its "no row"), for a statement's `.catch`: a
 * conditional write that refuses by failing (so that PostgreSQL rolls back a COMMIT sent behind
 * it, Sql.commitNow). Any other error is rethrown.
 */
export function nullIfChecked(err: unknown): null {
  if (err instanceof SqlConstraintError && err.kind === "check") return null;
  throw err;
}

/** A statement on a transaction handle after that transaction committed or rolled back. */
export class SqlTxEndedError extends Error {
  override readonly name = "SqlTxEndedError";
  constructor() {
    super("this transaction has ended; use the Sql it was opened from");
  }
}

/**
 * A statement on the root `Sql` from inside one of its own transactions (instead of the tx handle).
 * On SQLite it would wait for the transaction it is part of, for ever; on PostgreSQL it would run
 * outside the transaction (and could wait on its locks). Both executors refuse it at once.
 */
export class SqlNestingError extends Error {
  override readonly name = "SqlNestingError";
  constructor() {
    super("a transaction's body used the Sql it was opened from: use the tx handle given to the body");
  }
}

/** A transaction's scope: its root executor, and whether the transaction is still open. */
export interface TxScope {
  root: object;
  open: boolean;
  /** What `afterCommit` deferred: run once the outermost transaction committed (a savepoint's join it when released). */
  afterCommit: (() => void)[];
}

/**
 * The transaction the current async call chain is inside (see SqlNestingError). Timers and
 * promises created in a transaction's body keep this context after it ends (a wake-up scheduled
 * inside it, say): `open` turns false at the end so they are not refused then.
 */
export const openTransaction = new AsyncLocalStorage<TxScope>();

/**
 * Runs `fn` once the transaction the current call chain is inside has committed (its outermost
 * one: a savepoint's deferred calls wait for the root), or now when outside any open transaction.
 * Dropped when that transaction rolls back. For hints to other instances (a bus publish), which
 * must not be sent before the change they announce is visible, nor through the root `Sql` from
 * inside its own transaction. `fn` must be quick and not throw (a throw is swallowed: the commit
 * stands).
 */
export function afterCommit(fn: () => void): void {
  const scope = openTransaction.getStore();
  if (scope?.open) scope.afterCommit.push(fn);
  else fn();
}

/** Runs the calls `afterCommit` deferred in a committed transaction's scope. */
export function runAfterCommit(scope: TxScope): void {
  for (const fn of scope.afterCommit.splice(0)) {
    try {
      fn();
    } catch {
      // A hint that could not be given: the pollers find the change.
    }
  }
}

/** Whether the current call chain is inside a still-open transaction of `root`. */
export function insideOwnTx(root: object): boolean {
  const scope = openTransaction.getStore();
  return scope?.open === true && scope.root === root;
}

/**
 * Statements sent by the executors: `statements` (all/get/run) and `control` (BEGIN, COMMIT,
 * ROLLBACK, SAVEPOINT, RELEASE). On PostgreSQL each is a network round trip, except the
 * `pipelined` statements (of `statements`: sent on a transaction while an earlier one had not
 * answered yet), so round trips = statements - pipelined + control. Counted only inside `countStatements`, for tests that pin how many
 * statements an operation takes (docs/performance.md "Issue 36: PostgreSQL round trips").
 */
export interface StatementCount {
  statements: number;
  control: number;
  pipelined: number;
  /** Each statement's first words, in order (for a failing test's message). */
  sent: string[];
}

const counting = new AsyncLocalStorage<StatementCount>();
let countingUsed = false;

/** Counts one statement of `kind` for the `countStatements` call the current call chain is in. */
export function countStatement(kind: "statements" | "control" | "pipelined", text: string, n = 1): void {
  if (!countingUsed) return; // the production path: one boolean test per statement
  const c = counting.getStore();
  if (!c) return;
  c[kind] += n;
  const words = text.replace(/\s+/g, " ").trim().slice(0, 60);
  // A pipelined statement was counted as a statement just before: marked with a leading "+".
  if (kind === "pipelined") c.sent[c.sent.length - 1] = `+ ${words}`;
  else c.sent.push(words);
}

/**
 * Runs `fn` and counts the statements its call chain sends (and work it started that keeps its
 * async context: a group-committed batch flushed for it). Background work of other contexts
 * (pollers, workers) is not counted. For tests.
 */
export async function countStatements<T>(fn: () => Promise<T>): Promise<{ value: T; count: StatementCount }> {
  countingUsed = true;
  const count: StatementCount = { statements: 0, control: 0, pipelined: 0, sent: [] };
  const value = await counting.run(count, fn);
  return { value, count };
}

/** Bound on the per-connection caches of statements and translated queries (queries are constants). */
export const SQL_CACHE_LIMIT = 512;

/** Adds to a bounded cache, dropping the oldest entry (Map keeps insertion order). */
export function cachePut<V>(cache: Map<string, V>, key: string, value: V, evicted?: (v: V) => void): V {
  if (cache.size >= SQL_CACHE_LIMIT) {
    const oldest = cache.keys().next().value as string;
    const v = cache.get(oldest) as V;
    cache.delete(oldest);
    evicted?.(v);
  }
  cache.set(key, value);
  return value;
}
