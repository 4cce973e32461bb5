import type { Sql, SqlParam } from "./sql.ts";

/**
 * One statement of a store, bound to the `Sql` it runs on (the root or a transaction). Written
 * with `?` placeholders, or `?N` (bun:sqlite's numbered form, used where a value appears twice):
 * numbered ones are rewritten to plain `?` once, with the parameters repeated in their order, so
 * the text is the same in both dialects.
 */
export class Stmt<R = unknown, P extends readonly SqlParam[] = SqlParam[]> {
  constructor(
    readonly sql: Sql,
    readonly text: string,
    private readonly order: readonly number[] | null = numberedOrder(text),
    private readonly plain: string = order ? text.replace(NUMBERED, "?") : text,
  ) {}

  async get(...params: P): Promise<R | null> {
    return await this.sql.get<R>(this.plain, this.params(params));
  }

  async all(...params: P): Promise<R[]> {
    return await this.sql.all<R>(this.plain, this.params(params));
  }

  async run(...params: P): Promise<{ changes: number }> {
    return await this.sql.run(this.plain, this.params(params));
  }

  /** The same statement on another Sql (a transaction). */
  on(sql: Sql): Stmt<R, P> {
    return new Stmt<R, P>(sql, this.text, this.order, this.plain);
  }

  private params(params: P): readonly SqlParam[] {
    const order = this.order;
    return order ? order.map((n) => params[n - 1] as SqlParam) : params;
  }
}

const NUMBERED = /\?(\d+)/g;

/** For a query with `?N` placeholders, the parameter number of each placeholder in text order. */
function numberedOrder(text: string): number[] | null {
  if (!/\?\d/.test(text)) return null;
  if (/\?(?!\d)/.test(text)) throw new Error(`mixed ? and ?N placeholders: ${text}`);
  return [...text.matchAll(NUMBERED)].map((m) => Number(m[1]));
}

/**
 * The base of every store: a class over `Sql` whose methods are all async. `store.in(tx)` is a
 * cheap view of the same store whose statements run in the caller's transaction (docs/architecture.md
 * "Stores and transactions"); a store bound to a transaction never opens one of its own: its
 * `atomic` blocks become savepoints of the caller's.
 */
export abstract class SqlStore {
  /** The statements prepared in the constructor, re-bound by `in(tx)`. */
  protected s: Record<string, { on(sql: Sql): unknown }> = {};

  /**
   * Views by transaction, shared by the store and its views (one view per store and transaction);
   * a `variant` has its own.
   */
  private views = new WeakMap<Sql, SqlStore>();

  constructor(protected sql: Sql) {}

  /** A statement on this store's Sql (for queries built at run time). */
  protected q<R = unknown, P extends readonly SqlParam[] = SqlParam[]>(text: string): Stmt<R, P> {
    return new Stmt<R, P>(this.sql, text);
  }

  /** The same store over `tx`: its writes join the caller's transaction. */
  in(tx: Sql): this {
    if (tx === this.sql) return this;
    const cached = this.views.get(tx);
    if (cached) return cached as this;
    const view = Object.create(this) as this;
    view.sql = tx;
    view.inCallersTx = true;
    (view as unknown as { s: unknown }).s = boundStatements(this.s, tx);
    view.bound(tx);
    this.views.set(tx, view);
    return view;
  }

  /**
   * A view of this store that a subclass then changes (JobStore.fenced sets its lease fence), with
   * a transaction-view cache of its own: `variant.in(tx)` must not return the unchanged store's
   * view of `tx`, nor the unchanged store the variant's.
   */
  protected variant(): this {
    const view = Object.create(this) as this;
    view.views = new WeakMap();
    return view;
  }

  /** Runs `fn` in one transaction on this store's Sql (a savepoint when bound to a transaction). */
  async transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    return await this.sql.tx(fn);
  }

  /** Re-binds the stores this one writes through in the same transaction (JobStore's ledger). */
  protected bound(_tx: Sql): void {}

  /**
   * Runs `fn` atomically: a transaction of its own on the root Sql, a savepoint inside the caller's
   * transaction when this store is bound to one (so a failing step rolls back only itself, as
   * bun:sqlite's nested transactions did).
   */
  protected async atomic<T>(fn: (self: this) => Promise<T>): Promise<T> {
    return await this.sql.tx(async (tx) => await fn(this.in(tx)));
  }

  /** Whether this is a view bound to a caller's transaction (`in(tx)`). */
  protected inCallersTx = false;

  /**
   * `atomic` without the savepoint when bound to a caller's transaction: `fn` runs in it directly.
   * A savepoint is two statements more (SAVEPOINT, RELEASE), each a round trip on PostgreSQL, on
   * every submit and settlement (docs/performance.md "Issue 36: PostgreSQL round trips"). Only for
   * a method that writes nothing before its last refusal (a DomainError thrown after a write would
   * leave that write in the caller's transaction if the caller caught it and committed): the
   * ledger's reserve, settle and release, whose callers let every error end their transaction.
   */
  protected async atomicOrJoin<T>(fn: (self: this) => Promise<T>): Promise<T> {
    if (this.inCallersTx) return await fn(this);
    return await this.atomic(fn);
  }
}

const ROOT = Symbol("root statements");
const TX = Symbol("transaction");
type Statements = Record<string, { on(sql: Sql): unknown }>;
const lazyPrototypes = new WeakMap<Statements, object>();

/**
 * A store's statements bound to `tx`, each on first use: a group-committed batch opens a savepoint
 * (a new tx handle, so a new view) per item, and binding every statement of every store it touches
 * eagerly was 2-6% of the server's CPU under load (bun --cpu-prof). One getter per statement lives
 * on a prototype shared by all views of the store; a bound statement replaces its getter.
 */
function boundStatements(s: Statements, tx: Sql): Statements {
  const root = ((s as Record<symbol, unknown>)[ROOT] as Statements | undefined) ?? s;
  let proto = lazyPrototypes.get(root);
  if (!proto) {
    proto = { [ROOT]: root };
    for (const k of Object.keys(root)) {
      Object.defineProperty(proto, k, {
        get(this: Record<symbol, Sql>) {
          const bound = root[k]!.on(this[TX]!);
          Object.defineProperty(this, k, { value: bound });
          return bound;
        },
      });
    }
    lazyPrototypes.set(root, proto);
  }
  const view = Object.create(proto) as Record<symbol, Sql>;
  view[TX] = tx;
  return view as unknown as Statements;
}

/**
 * A view of a service whose stores are bound to `tx` (each `store.in(tx)`), for a service method
 * whose body runs several stores in one transaction: `this.atomic(async (self, tx) => ...)`.
 */
export function serviceIn<T extends object>(service: T, tx: Sql, stores: readonly string[]): T {
  const view = Object.create(service) as T;
  for (const k of stores) {
    const store = (service as Record<string, unknown>)[k] as SqlStore | null;
    if (store) (view as Record<string, unknown>)[k] = store.in(tx);
  }
  return view;
}

/**
 * ` FOR UPDATE SKIP LOCKED` on PostgreSQL, for the sub-select of a claim (concurrent claimers
 * take different rows instead of queueing on the same ones); SQLite (one writer) does not parse it.
 */
export function skipLocked(sql: Sql): string {
  return sql.dialect === "postgres" ? " FOR UPDATE SKIP LOCKED" : "";
}

/**
 * The values of a JSON array parameter as a sub-select (`?N` when numbered): SQLite's json_each,
 * PostgreSQL's jsonb_array_elements_text. A list of any length in one prepared statement.
 */
export function jsonList(sql: Sql, n?: number): string {
  const p = n === undefined ? "?" : `?${n}`;
  return sql.dialect === "postgres"
    ? // The parameter typed text: typed jsonb, Bun.sql would send the string as a JSON string.
      `SELECT value FROM jsonb_array_elements_text(CAST(CAST(${p} AS TEXT) AS jsonb))`
    : `SELECT value FROM json_each(${p})`;
}
