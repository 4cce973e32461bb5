import { errorFields, log } from "../lib/log.ts";
import { nowSeconds } from "../lib/time.ts";
import type { Bus, Unsubscribe } from "./bus.ts";
import type { Sql } from "./sql.ts";

/**
 * Cache invalidation across instances within 1 s ("a revoked key or a changed limit takes effect on
 * every instance within 1 second", docs/scale-out.md); docs/scale-out.md "Across instances".
 *
 * A cache belongs to a SCOPE ("keys", "limits", "settings": a few coarse names, not one per row).
 * Every change to what a scope caches bumps the scope's version in the `cache_versions` table, in
 * the same transaction as the change. Each instance learns of a new version two ways:
 * - the hint: after the commit the changer `announce`s the new versions on the bus (channel
 *   "cache"); this instance's watchers run before `announce` returns, other instances' a few ms
 *   later;
 * - the guarantee: every instance reads `cache_versions` (a handful of rows) every `pollMs`
 *   (250 ms), so a lost hint, or a change made by a process without a bus (the CLI on SQLite),
 *   is seen within about 250 ms plus a query.
 * A watcher runs once per newer version seen, whichever way it came first. If the table cannot be
 * read for longer than `staleAfterMs` (1 s), every watcher runs once (drop everything: serve from
 * the database, not from a cache nobody can confirm) and the polls go on.
 *
 * The same class serves SQLite and PostgreSQL (over the `Sql` port and either bus). On SQLite the
 * poll also sees the operator CLI's changes, made by another process on the same file.
 */
export interface CacheInvalidationOptions {
  /** How often cache_versions is read (default 250 ms). */
  pollMs?: number;
  /** After this long without a successful read, every watcher runs once (default 1000 ms). */
  staleAfterMs?: number;
}

/** The versions a `bump` wrote, for `announce` once the transaction has committed. */
export type Bumped = ReadonlyMap<string, bigint>;

const SCOPE = /^[a-z][a-z0-9_.:-]{0,63}$/;
const CHANNEL = "cache";

export class CacheInvalidation {
  readonly #sql: Sql;
  readonly #bus: Bus;
  readonly #pollMs: number;
  readonly #staleAfterMs: number;
  /** The newest version of each scope this instance has seen (and told its watchers about). */
  readonly #seen = new Map<string, bigint>();
  readonly #watchers = new Map<string, Set<() => void>>();
  #timer: ReturnType<typeof setInterval> | null = null;
  #unsubscribe: Unsubscribe | null = null;
  #polling: Promise<void> | null = null;
  #lastRead = Date.now();
  #flushedForOutage = false;
  #lastWarning = 0;

  constructor(sql: Sql, bus: Bus, options: CacheInvalidationOptions = {}) {
    this.#sql = sql;
    this.#bus = bus;
    this.#pollMs = options.pollMs ?? 250;
    this.#staleAfterMs = options.staleAfterMs ?? 1_000;
  }

  /**
   * Reads the current versions (watchers are not called for them), subscribes to the bus, and
   * starts polling. Instances that only change things (the CLI) need not start.
   */
  async start(): Promise<void> {
    if (this.#timer) return;
    await this.#read(false);
    this.#unsubscribe = this.#bus.subscribe(CHANNEL, (payload) => this.#hint(payload), {
      onMaybeMissed: () => void this.check(),
    });
    this.#timer = setInterval(() => void this.check(), this.#pollMs);
    this.#timer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    await this.#polling;
  }

  /**
   * Runs `fn` each time `scope` changes after this call (here: when the change is announced; on
   * another instance: within 1 s). `fn` must be quick and not throw (a throw is logged); typically
   * it clears a Map.
   */
  watch(scope: string, fn: () => void): () => void {
    checkScope(scope);
    let set = this.#watchers.get(scope);
    if (!set) {
      set = new Set();
      this.#watchers.set(scope, set);
    }
    set.add(fn);
    return () => void set.delete(fn);
  }

  /**
   * In the transaction that changes what the scopes cache: bumps each scope's version. Returns the
   * new versions; pass them to `announce` after the commit. On PostgreSQL the row of a scope stays
   * locked until the transaction ends, so bump in the short transactions of administrative changes,
   * never on a per-request path.
   */
  async bump(tx: Sql, ...scopes: string[]): Promise<Bumped> {
    const bumped = new Map<string, bigint>();
    // Sorted: two transactions bumping the same scopes lock their rows in the same order.
    for (const scope of [...new Set(scopes)].sort()) {
      checkScope(scope);
      const row = await tx.get<{ version: bigint }>(
        `INSERT INTO cache_versions (scope, version, changed_at) VALUES (?, 1, ?)
         ON CONFLICT (scope) DO UPDATE SET version = cache_versions.version + 1, changed_at = excluded.changed_at
         RETURNING version`,
        [scope, nowSeconds()],
      );
      bumped.set(scope, row!.version);
    }
    return bumped;
  }

  /**
   * After the bump's transaction committed: runs this instance's watchers (before resolving) and
   * hints the other instances. Never rejects for a bus failure (their polls catch up).
   */
  async announce(bumped: Bumped): Promise<void> {
    if (bumped.size === 0) return;
    for (const [scope, version] of bumped) this.#saw(scope, version);
    await this.#bus.publish(CHANNEL, [...bumped].map(([s, v]) => `${s}=${v}`).join(";"));
  }

  /** A change that is its own transaction: bump, commit, announce. */
  async changed(...scopes: string[]): Promise<void> {
    await this.announce(await this.#sql.tx((tx) => this.bump(tx, ...scopes)));
  }

  /** The newest version of `scope` this instance has seen (0 when none). */
  version(scope: string): bigint {
    return this.#seen.get(scope) ?? 0n;
  }

  /** Reads cache_versions now (the poll; also after the bus may have missed hints). */
  check(): Promise<void> {
    this.#polling ??= this.#read(true).finally(() => {
      this.#polling = null;
    });
    return this.#polling;
  }

  async #read(notify: boolean): Promise<void> {
    const started = Date.now();
    try {
      const rows = await this.#sql.all<{ scope: string; version: bigint }>(
        "SELECT scope, version FROM cache_versions",
      );
      this.#lastRead = started;
      this.#flushedForOutage = false;
      for (const r of rows) {
        if (notify) this.#saw(r.scope, r.version);
        else this.#seen.set(r.scope, r.version);
      }
    } catch (err) {
      if (!notify) throw err;
      const now = Date.now();
      if (now - this.#lastWarning >= 10_000) {
        this.#lastWarning = now;
        log("warn", "cache invalidation: cache_versions unreadable", errorFields(err));
      }
      if (now - this.#lastRead > this.#staleAfterMs && !this.#flushedForOutage) {
        this.#flushedForOutage = true;
        for (const scope of this.#watchers.keys()) this.#fire(scope);
      }
    }
  }

  #hint(payload: string): void {
    for (const part of payload.split(";")) {
      const eq = part.indexOf("=");
      const scope = part.slice(0, eq);
      const version = part.slice(eq + 1);
      if (eq > 0 && SCOPE.test(scope) && /^\d{1,19}$/.test(version)) this.#saw(scope, BigInt(version));
    }
  }

  #saw(scope: string, version: bigint): void {
    if (version <= (this.#seen.get(scope) ?? 0n)) return;
    this.#seen.set(scope, version);
    this.#fire(scope);
  }

  #fire(scope: string): void {
    for (const fn of [...(this.#watchers.get(scope) ?? [])]) {
      try {
        fn();
      } catch (err) {
        log("error", "cache invalidation watcher failed", { scope, ...errorFields(err) });
      }
    }
  }
}

function checkScope(scope: string): void {
  if (!SCOPE.test(scope)) throw new Error(`bad cache scope name: ${JSON.stringify(scope)}`);
}
