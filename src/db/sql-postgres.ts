import { type ReservedSQL, SQL } from "bun";
import {
  type ConstraintKind,
  cachePut,
  countStatement,
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

/** What `openSql` needs to reach PostgreSQL (parsed and checked by src/config). */
export interface PostgresSettings {
  /** postgres://user@host:port/db[?sslmode=...]; a password in it is used unless `password` is given. */
  url: string;
  password: string | null;
  /** Connections in the pool (default 10). */
  maxConnections?: number;
  /** A statement running longer is cancelled by the server (default 30 s). */
  statementTimeoutMs?: number;
  /** Giving up on opening a connection (default 10 s). */
  connectTimeoutSeconds?: number;
}

type Client = SQL | ReservedSQL;

/**
 * One transaction's connection, shared by its handle and its savepoints' handles: statements sent
 * on it and not answered yet (the next one is pipelined when above 0), and the COMMIT once sent
 * by `commitNow`.
 */
interface Conn {
  inFlight: number;
  commit: Promise<void> | null;
}

/**
 * The `Sql` port over Bun.sql (a pool). `?` placeholders are translated to `$1..` once per query
 * string (cached); Bun prepares each statement once per connection. `tx` is a transaction driven
 * by hand on a reserved connection (READ COMMITTED, PostgreSQL's default), `tx.tx` a savepoint:
 * BEGIN, COMMIT and the savepoints' statements are sent as prepared statements (Bun sends a
 * statement without parameters as a simple query, which waits for every earlier answer and is
 * waited for), so BEGIN shares its round trip with the body's first statements, and `commitNow`
 * can send the COMMIT behind the body's last ones (docs/performance.md "Issue 36: PostgreSQL
 * submits with one key"). Every statement is sent when it is called (Bun's queries are lazy; an
 * awaited one would be sent a microtask later, after a COMMIT sent meanwhile). Values are
 * normalised to the port's types from the result's column types: int2/int4 (e.g. a literal `1`)
 * and integral numerics (a `sum()` of BIGINT) to bigint, bool (a comparison) to 1n/0n, bytea (a
 * Buffer) to a Uint8Array; a boolean parameter is bound as 1/0. Constraint violations become
 * SqlConstraintError.
 *
 * Connection settings are passed explicitly from the URL (bunSqlOptions).
 */
export class PostgresSql implements Sql {
  readonly dialect = "postgres" as const;
  #ended = false;

  private constructor(
    private readonly client: Client,
    private readonly depth: number,
    private readonly queries: Map<string, string>,
    /** The transaction's connection state; null on the pool. */
    private readonly conn: Conn | null,
  ) {}

  static connect(settings: PostgresSettings): PostgresSql {
    return new PostgresSql(new SQL(bunSqlOptions(settings)), 0, new Map(), null);
  }

  all<T>(query: string, params: readonly SqlParam[] = []): Promise<T[]> {
    return this.#query(query, params).then((r) => normaliseRows(r) as T[]);
  }

  get<T>(query: string, params: readonly SqlParam[] = []): Promise<T | null> {
    return this.#query(query, params).then((r) => (r.length ? (normaliseRows(r)[0] as T) : null));
  }

  run(query: string, params: readonly SqlParam[] = []): Promise<{ changes: number }> {
    return this.#query(query, params).then((r) => ({ changes: r.affectedRows }));
  }

  async tx<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    if (this.#ended) throw new SqlTxEndedError();
    if (this.depth === 0 && insideOwnTx(this)) throw new SqlNestingError();
    if (this.conn?.commit) throw new SqlTxEndedError();
    const outer = this.depth === 0 ? undefined : openTransaction.getStore();
    const root = outer?.root ?? this;
    // A savepoint's afterCommit calls are kept apart and join its transaction's when it is released
    // (a rolled-back savepoint's are dropped): they run once the root transaction commits.
    const deferred: (() => void)[] = [];
    const body = async (inner: PostgresSql): Promise<T> => {
      const scope: TxScope = { root, open: true, afterCommit: deferred };
      try {
        return await openTransaction.run(scope, fn, inner);
      } finally {
        inner.#ended = true;
        scope.open = false;
      }
    };
    try {
      if (this.depth > 0) {
        const result = await this.#savepoint(body);
        outer?.afterCommit.push(...deferred);
        return result;
      }
      const reserved = await (this.client as SQL).reserve();
      try {
        const result = await this.#transaction(reserved, body);
        runAfterCommit({ root, open: false, afterCommit: deferred });
        return result;
      } finally {
        // After its COMMIT or ROLLBACK (a connection released inside a transaction is closed).
        await reserved.release();
      }
    } catch (err) {
      throw mapPostgresError(err);
    }
  }

  /**
   * Inside a transaction's body: sends the COMMIT now, pipelined behind the statements sent and
   * not yet answered, instead of after the body (one round trip fewer holding the rows they lock).
   * Nothing may be sent on the transaction after it. If one of those statements fails,
   * PostgreSQL ends the transaction with a ROLLBACK instead and the promise rejects; so the body
   * must leave every refusal to its statements (a constraint that fails), never to code that
   * runs on their answers: a throw after the COMMIT is sent cannot undo it. Null on a savepoint or
   * outside a transaction: the transaction commits when its body returns, as always.
   */
  commitNow(): Promise<void> | null {
    if (this.depth !== 1 || this.#ended || !this.conn || this.conn.commit) return null;
    this.conn.commit = this.#commit(this.client as ReservedSQL);
    // Settled by tx() whatever the body does; never an unhandled rejection.
    this.conn.commit.catch(() => {});
    return this.conn.commit;
  }

  /** BEGIN pipelined with the body's first statements; COMMIT after it (or already sent), or ROLLBACK. */
  async #transaction<T>(reserved: ReservedSQL, body: (inner: PostgresSql) => Promise<T>): Promise<T> {
    const conn: Conn = { inFlight: 0, commit: null };
    const inner = new PostgresSql(reserved, 1, this.queries, conn);
    const begun = inner.#control(reserved`BEGIN`, "BEGIN");
    begun.catch(() => {}); // its failure is the body's statements' too
    let result: T;
    try {
      result = await body(inner);
    } catch (err) {
      if (conn.commit) await conn.commit.catch(() => {});
      else await inner.#control(reserved`ROLLBACK`, "ROLLBACK").catch(() => {});
      throw err;
    }
    await (conn.commit ?? inner.#commit(reserved));
    return result;
  }

  /** COMMIT; rejects when PostgreSQL rolled the transaction back (a statement in it had failed). */
  async #commit(reserved: ReservedSQL): Promise<void> {
    const r = await this.#control(reserved`COMMIT`, "COMMIT");
    if (r.command !== "COMMIT")
      throw new Error("COMMIT was rolled back by the server because the transaction was already aborted");
  }

  /** SAVEPOINT pipelined with the body's first statements; RELEASE, or ROLLBACK TO and RELEASE. */
  async #savepoint<T>(body: (inner: PostgresSql) => Promise<T>): Promise<T> {
    const c = this.client as ReservedSQL;
    const inner = new PostgresSql(c, this.depth + 1, this.queries, this.conn);
    // One name for all: RELEASE and ROLLBACK TO act on the newest savepoint of that name.
    const opened = inner.#control(c`SAVEPOINT s`, "SAVEPOINT");
    opened.catch(() => {});
    let result: T;
    try {
      result = await body(inner);
    } catch (err) {
      const back = inner.#control(c`ROLLBACK TO SAVEPOINT s`, "ROLLBACK TO");
      await Promise.all([back, inner.#control(c`RELEASE SAVEPOINT s`, "RELEASE")]).catch(() => {});
      throw err;
    }
    await inner.#control(c`RELEASE SAVEPOINT s`, "RELEASE");
    return result;
  }

  /** A transaction control statement, sent now and counted (pipelined when an answer is awaited). */
  async #control(q: SQL.Query<unknown>, name: string): Promise<SQL.ResultMetadata & unknown[]> {
    countStatement("control", name);
    const conn = this.conn!;
    if (conn.inFlight > 0) countStatement("pipelined", name);
    conn.inFlight++;
    try {
      return (await q.execute()) as SQL.ResultMetadata & unknown[];
    } finally {
      conn.inFlight--;
    }
  }

  /**
   * Runs a script of several statements (no parameters) with the simple query protocol. For the
   * migration runner only; not part of the port.
   */
  async script(text: string): Promise<void> {
    if (this.#ended) throw new SqlTxEndedError();
    try {
      await this.client.unsafe(text).simple();
    } catch (err) {
      throw mapPostgresError(err);
    }
  }

  /** Closes the pool, letting running queries finish for up to 5 s. */
  async close(): Promise<void> {
    if (this.depth === 0) await (this.client as SQL).close({ timeout: 5 });
  }

  async #query(query: string, params: readonly SqlParam[]): Promise<SQL.ResultMetadata & unknown[]> {
    if (this.#ended || this.conn?.commit) throw new SqlTxEndedError();
    if (this.depth === 0 && insideOwnTx(this)) throw new SqlNestingError();
    const text = this.queries.get(query) ?? cachePut(this.queries, query, toDollarPlaceholders(query));
    countStatement("statements", query);
    const conn = this.conn;
    if (conn && conn.inFlight > 0) countStatement("pipelined", query);
    if (conn) conn.inFlight++;
    try {
      // Sent now (see the class comment), in the order of the calls.
      return await this.client.unsafe(text, params.map(bindable)).execute();
    } catch (err) {
      throw mapPostgresError(err);
    } finally {
      if (conn) conn.inFlight--;
    }
  }
}

/**
 * Bun.sql's options for `settings`, every connection setting passed explicitly from the URL
 * (Bun.sql otherwise lets PGDATABASE and friends from the environment override parts of it).
 * Also used by the bus's listening connection and the leadership session (src/db/bus.ts,
 * src/db/leader.ts), which add or override `connection` parameters.
 */
export function bunSqlOptions(settings: PostgresSettings): SQL.PostgresOrMySQLOptions {
  const u = new URL(settings.url);
  const sslmode = u.searchParams.get("sslmode");
  return {
    adapter: "postgres",
    hostname: decodeURIComponent(u.hostname).replace(/^\[(.*)\]$/, "$1"),
    port: Number(u.port || 5432),
    username: decodeURIComponent(u.username),
    password: settings.password ?? (u.password ? decodeURIComponent(u.password) : ""),
    database: decodeURIComponent(u.pathname.slice(1)),
    // libpq's default: TLS when the server offers it.
    tls: (sslmode ?? "prefer") as "prefer",
    bigint: true,
    max: settings.maxConnections ?? 10,
    connectionTimeout: settings.connectTimeoutSeconds ?? 10,
    connection: {
      application_name: "gengate",
      statement_timeout: settings.statementTimeoutMs ?? 30_000,
      // A transaction left open (a bug, a stuck peer) must not hold its locks for ever.
      idle_in_transaction_session_timeout: 60_000,
    },
  };
}

function bindable(p: SqlParam): unknown {
  return typeof p === "boolean" ? (p ? 1n : 0n) : p;
}

// PostgreSQL type OIDs whose values Bun.sql does not return as the port's types.
const BOOL = 16;
const BYTEA = 17;
const INT2 = 21;
const INT4 = 23;
const OID = 26;
const NUMERIC = 1700;
const INTEGRAL = /^-?\d+$/;

function convert(type: number, v: unknown): unknown {
  if (v === null) return null;
  switch (type) {
    case BOOL:
      return v ? 1n : 0n;
    case BYTEA: {
      const b = v as Uint8Array;
      return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    }
    case INT2:
    case INT4:
    case OID:
      return BigInt(v as number);
    case NUMERIC:
      return INTEGRAL.test(v as string) ? BigInt(v as string) : Number(v);
    default:
      return v;
  }
}

/** A plain array of plain rows with the port's value types (see the class comment). */
function normaliseRows(result: SQL.ResultMetadata & unknown[]): unknown[] {
  const fix: { name: string; type: number }[] = [];
  for (const c of result.columns ?? []) {
    if (c.type === BOOL || c.type === BYTEA || c.type === INT2 || c.type === INT4) fix.push(c);
    else if (c.type === OID || c.type === NUMERIC) fix.push(c);
  }
  const rows = Array.from(result) as Record<string, unknown>[];
  if (fix.length === 0) return rows;
  for (const row of rows) for (const c of fix) row[c.name] = convert(c.type, row[c.name]);
  return rows;
}

/**
 * `?` -> `$1, $2, ...`, outside string literals, quoted identifiers, comments and dollar quotes.
 * (PostgreSQL's jsonb `?` operators cannot be written through the port; use jsonb_exists.)
 */
export function toDollarPlaceholders(query: string): string {
  let out = "";
  let n = 0;
  let i = 0;
  const len = query.length;
  while (i < len) {
    const ch = query[i]!;
    if (ch === "?") {
      out += `$${++n}`;
      i++;
      continue;
    }
    let end = i + 1;
    if (ch === "'" || ch === '"') {
      // '' (or "") inside is an escaped quote: the scan just continues past it.
      end = query.indexOf(ch, i + 1);
      while (end !== -1 && query[end + 1] === ch) end = query.indexOf(ch, end + 2);
      end = end === -1 ? len : end + 1;
    } else if (ch === "-" && query[i + 1] === "-") {
      end = query.indexOf("\n", i);
      end = end === -1 ? len : end + 1;
    } else if (ch === "/" && query[i + 1] === "*") {
      end = query.indexOf("*/", i + 2);
      end = end === -1 ? len : end + 2;
    } else if (ch === "$") {
      const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(query.slice(i))?.[0];
      if (tag) {
        end = query.indexOf(tag, i + tag.length);
        end = end === -1 ? len : end + tag.length;
      }
    }
    out += query.slice(i, end);
    i = end;
  }
  return out;
}

const PG_KINDS: Record<string, ConstraintKind> = {
  "23505": "unique",
  "23514": "check",
  "23503": "foreign_key",
  "23502": "not_null",
};

/** A constraint violation (SQLSTATE class 23) becomes a SqlConstraintError; the rest pass unchanged. */
export function mapPostgresError(err: unknown): unknown {
  if (err instanceof SqlConstraintError || err instanceof SqlTxEndedError) return err;
  const e = err as { errno?: unknown; constraint?: unknown; message?: unknown };
  const kind = typeof e?.errno === "string" ? PG_KINDS[e.errno] : undefined;
  if (!kind) return err;
  const constraint = typeof e.constraint === "string" ? e.constraint : null;
  return new SqlConstraintError(kind, String(e.message), constraint, { cause: err });
}
