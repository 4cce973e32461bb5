import { SQL } from "bun";
import type { DatabaseSettings } from "../config/schema.ts";
import { errorFields, log } from "../lib/log.ts";
import { afterCommit, type Sql } from "./sql.ts";
import { bunSqlOptions } from "./sql-postgres.ts";

/**
 * Notifications across instances (docs/scale-out.md "Across instances"): "something changed on
 * channel X", so that a waiter or a worker looks now instead of at its next poll. A notification is
 * a HINT: it can be lost (a dropped connection, an instance that starts after it was sent), so every
 * caller also polls, and the poll is the guarantee.
 *
 * - `LocalBus` (SQLite: one instance) delivers in process.
 * - `PostgresBus` uses PostgreSQL's LISTEN/NOTIFY through Bun.sql's `listen()` (one dedicated
 *   connection, reconnected by Bun with backoff, every channel re-subscribed) and publishes with
 *   `pg_notify` through the application's pool. Measured on loopback: a notification reaches another
 *   client in about 0.2 ms (p50); after `pg_terminate_backend` of the listening connection it was
 *   listening again within 0.4 s (test/db/bus.test.ts prints the figures).
 *
 * Both deliver a publish to this instance's own subscribers synchronously, inside `publish` (before
 * it returns), and to the other instances' subscribers asynchronously. Channels are a small fixed set
 * of names ("jobs", "cache"); the payload says which row (a job id), up to MAX_BUS_PAYLOAD_BYTES.
 */
export interface Bus {
  /**
   * Sends `payload` to every subscriber of `channel` on every instance, this one included (its
   * subscribers run before this returns, even when the promise is not awaited). Call it after the
   * change it announces has committed. Never rejects: a transport failure is logged (a hint may be
   * lost; the others' polls catch up), so `void bus.publish(...)` is fine; after `close` it does
   * nothing. Throws BusUsageError at once (not a rejection) for a bad channel name or a payload
   * over MAX_BUS_PAYLOAD_BYTES.
   */
  publish(channel: string, payload?: string): Promise<void>;
  /**
   * Calls `fn` with each payload published on `channel`, until the returned function is called.
   * `onMaybeMissed` runs whenever notifications may have been lost while this subscriber was
   * registered (PostgreSQL: each time the channel's LISTEN is acknowledged, the first time and
   * after every reconnect): look at the database now. The returned function's `ready` resolves once
   * the subscription receives other instances' notifications (at once in process).
   * Callbacks must be quick (set a flag, wake a waiter); one that throws is logged.
   */
  subscribe(channel: string, fn: (payload: string) => void, options?: SubscribeOptions): Unsubscribe;
  /**
   * Stops listening; subscribers get nothing more. Later publishes and subscribes do nothing
   * (a request or a job finishing during shutdown must not fail for it).
   */
  close(): Promise<void>;
}

export interface SubscribeOptions {
  onMaybeMissed?: () => void;
}

export type Unsubscribe = (() => void) & { readonly ready: Promise<void> };

/**
 * The largest payload, in UTF-8 bytes. PostgreSQL refuses a NOTIFY payload of 8000 bytes or more
 * (measured: 7999 passes, 8000 fails "payload string too long"); the envelope (the sender's id) takes
 * a few, the rest is headroom. Both buses refuse a larger one alike, so a caller that passes on
 * SQLite does not break on PostgreSQL.
 */
export const MAX_BUS_PAYLOAD_BYTES = 7900;

/** Channel names: lower-case, short (PostgreSQL's channel is "gengate." + name, at most 63 bytes). */
const CHANNEL = /^[a-z][a-z0-9_.-]{0,47}$/;

/** A programming error: a bad channel name or a payload too long. */
export class BusUsageError extends Error {
  override readonly name = "BusUsageError";
}

function checkPublish(channel: string, payload: string): void {
  checkChannel(channel);
  const bytes = Buffer.byteLength(payload, "utf8");
  if (bytes > MAX_BUS_PAYLOAD_BYTES) {
    throw new BusUsageError(`bus payload of ${bytes} bytes is over the limit of ${MAX_BUS_PAYLOAD_BYTES}`);
  }
}

function checkChannel(channel: string): void {
  if (!CHANNEL.test(channel)) throw new BusUsageError(`bad bus channel name: ${JSON.stringify(channel)}`);
}

interface Subscriber {
  fn: (payload: string) => void;
  onMaybeMissed?: () => void;
}

/** Per-channel subscriber sets and the calls into them (shared by both buses). */
class Fanout {
  readonly channels = new Map<string, Set<Subscriber>>();

  add(channel: string, subscriber: Subscriber): { first: boolean; remove: () => void } {
    let set = this.channels.get(channel);
    const first = !set;
    if (!set) {
      set = new Set();
      this.channels.set(channel, set);
    }
    set.add(subscriber);
    const s = set;
    return { first, remove: () => s.delete(subscriber) };
  }

  deliver(channel: string, payload: string): void {
    const set = this.channels.get(channel);
    if (!set) return;
    for (const s of [...set]) guarded(channel, () => s.fn(payload));
  }

  maybeMissed(channel: string): void {
    const set = this.channels.get(channel);
    if (!set) return;
    for (const s of [...set]) if (s.onMaybeMissed) guarded(channel, s.onMaybeMissed);
  }
}

function guarded(channel: string, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    log("error", "bus subscriber failed", { channel, ...errorFields(err) });
  }
}

const READY: Promise<void> = Promise.resolve();
const DONE: Promise<void> = Promise.resolve();
const NOTHING: Unsubscribe = Object.assign(() => {}, { ready: READY });

/** One instance (SQLite): publish calls the subscribers directly; nothing is ever missed. */
export class LocalBus implements Bus {
  readonly #fanout = new Fanout();
  #closed = false;

  publish(channel: string, payload = ""): Promise<void> {
    checkPublish(channel, payload);
    if (!this.#closed) this.#fanout.deliver(channel, payload);
    return DONE;
  }

  subscribe(channel: string, fn: (payload: string) => void, options: SubscribeOptions = {}): Unsubscribe {
    checkChannel(channel);
    if (this.#closed) return NOTHING;
    const { remove } = this.#fanout.add(channel, { fn, onMaybeMissed: options.onMaybeMissed });
    return Object.assign(() => void remove(), { ready: READY });
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#fanout.channels.clear();
  }
}

export interface PostgresBusOptions {
  /** The database (the same settings as the application's pool). */
  settings: { url: string; password: string | null };
  /** Where `pg_notify` runs: the application's PostgreSQL `Sql` (no extra connection for sending). */
  publisher: Sql;
  /** First retry delay when the first LISTEN of a channel fails (doubles up to 5 s). */
  retryMs?: number;
}

/**
 * LISTEN/NOTIFY. Bun.sql (1.4.5) has `sql.listen(channel, onnotify, onlisten)`: every listen of a
 * client shares one dedicated connection, which Bun reconnects with backoff (250 ms doubling to
 * 32 s) and re-subscribes, calling `onlisten` again; it does not retry a first `listen()` that
 * fails (no server yet), so this class does. The bus has its own client (only its listening
 * connection is ever opened, with `idle_session_timeout` off: a listening connection is idle) and
 * LISTENs once per channel, on first subscribe, for the rest of its life (channels are few).
 *
 * Each payload travels as "<sender id>:<payload>": the sender drops its own echo, having delivered
 * to its own subscribers already in `publish`.
 */
export class PostgresBus implements Bus {
  readonly #fanout = new Fanout();
  readonly #listener: SQL;
  readonly #publisher: Sql;
  readonly #retryMs: number;
  /** This bus's id in the envelope (random per bus, so two buses in one process are two senders). */
  readonly #id = crypto.randomUUID().slice(0, SENDER_ID_LENGTH);
  readonly #ready = new Map<string, Promise<void>>();
  readonly #subscriptions: Promise<SQL.ListenSubscription | null>[] = [];
  #closed = false;
  #lastWarning = 0;

  constructor(options: PostgresBusOptions) {
    const base = bunSqlOptions({ ...options.settings, maxConnections: 1 });
    this.#listener = new SQL({
      ...base,
      connection: { ...base.connection, application_name: "gengate-bus", idle_session_timeout: 0 },
    });
    this.#publisher = options.publisher;
    this.#retryMs = options.retryMs ?? 250;
  }

  publish(channel: string, payload = ""): Promise<void> {
    checkPublish(channel, payload);
    if (this.#closed) return DONE;
    this.#fanout.deliver(channel, payload);
    return this.#notify(channel, payload);
  }

  async #notify(channel: string, payload: string): Promise<void> {
    try {
      await this.#publisher.run("SELECT pg_notify(?, ?)", [pgChannel(channel), `${this.#id}:${payload}`]);
    } catch (err) {
      // A hint lost: the other instances' polls find the change. Logged at most every 10 s.
      const now = Date.now();
      if (now - this.#lastWarning >= 10_000) {
        this.#lastWarning = now;
        log("warn", "bus: a notification could not be sent", { channel, ...errorFields(err) });
      }
    }
  }

  subscribe(channel: string, fn: (payload: string) => void, options: SubscribeOptions = {}): Unsubscribe {
    checkChannel(channel);
    if (this.#closed) return NOTHING;
    const { first, remove } = this.#fanout.add(channel, { fn, onMaybeMissed: options.onMaybeMissed });
    if (first) this.#ready.set(channel, this.#listen(channel));
    return Object.assign(() => void remove(), { ready: this.#ready.get(channel)! });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#fanout.channels.clear();
    // Closing the client ends the listening connection (and its LISTENs) and a pending first listen.
    await this.#listener.close({ timeout: 1 });
    await Promise.allSettled(this.#subscriptions);
  }

  /** LISTENs on the channel, retrying a failed first attempt; resolves at the first acknowledgement. */
  #listen(channel: string): Promise<void> {
    let acknowledged: () => void = () => {};
    const ready = new Promise<void>((resolve) => {
      acknowledged = resolve;
    });
    const onNotify = (raw: string) => {
      // "<8-character sender id>:<payload>"; a NOTIFY sent otherwise (psql) is passed as is.
      const enveloped = raw[SENDER_ID_LENGTH] === ":";
      if (enveloped && raw.startsWith(this.#id)) return; // our own echo: delivered in publish
      this.#fanout.deliver(channel, enveloped ? raw.slice(SENDER_ID_LENGTH + 1) : raw);
    };
    const onListen = () => {
      acknowledged();
      this.#fanout.maybeMissed(channel);
    };
    const subscription = (async () => {
      let delay = this.#retryMs;
      for (let attempt = 1; !this.#closed; attempt++) {
        try {
          return await this.#listener.listen(pgChannel(channel), onNotify, onListen);
        } catch (err) {
          if (this.#closed) break;
          if (attempt === 1 || attempt % 10 === 0) {
            log("warn", "bus: LISTEN failed, retrying", { channel, attempt, ...errorFields(err) });
          }
          await Bun.sleep(delay * (0.5 + Math.random()));
          delay = Math.min(delay * 2, 5_000);
        }
      }
      acknowledged(); // closed before listening: nothing will arrive
      return null;
    })();
    this.#subscriptions.push(subscription);
    return ready;
  }
}

const SENDER_ID_LENGTH = 8;

function pgChannel(channel: string): string {
  return `gengate.${channel}`;
}

/** The bus for database_url: in process for SQLite, LISTEN/NOTIFY for PostgreSQL over `sql`. */
export function openBus(database: DatabaseSettings, sql: Sql): Bus {
  if (database.kind === "sqlite") return new LocalBus();
  return new PostgresBus({ settings: database, publisher: sql });
}

/**
 * The "hint plus poll" wait, race-free: subscribe first, then check the database, then wait.
 * `wait(ms)` resolves true at once if a matching notification (or a maybe-missed) arrived since the
 * previous wait, else at the next one, and false after `ms` (poll again) or when `signal` aborts.
 *
 * ```ts
 * const wake = new Wakeup(bus, "jobs.changed", (id) => id === jobId);
 * try {
 *   for (;;) {
 *     const job = await jobs.get(jobId);
 *     if (job.final || Date.now() > deadline) return job;
 *     await wake.wait(1_000, signal); // the poll period is the guarantee
 *   }
 * } finally {
 *   wake.close();
 * }
 * ```
 */
export class Wakeup {
  #pending = false;
  #resolve: ((woken: boolean) => void) | null = null;
  readonly #unsubscribe: Unsubscribe;

  constructor(bus: Bus, channel: string, match: (payload: string) => boolean = () => true) {
    this.#unsubscribe = bus.subscribe(channel, (payload) => match(payload) && this.#wake(), {
      onMaybeMissed: () => this.#wake(),
    });
  }

  /** Resolves once the subscription hears other instances (see Bus.subscribe). */
  get ready(): Promise<void> {
    return this.#unsubscribe.ready;
  }

  wait(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve(true);
    }
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", aborted);
        this.#resolve = null;
        resolve(woken);
      };
      const aborted = () => done(false);
      const timer = setTimeout(() => done(false), ms);
      signal?.addEventListener("abort", aborted, { once: true });
      this.#resolve = done;
    });
  }

  /** Unsubscribes; a wait going on resolves false. */
  close(): void {
    this.#unsubscribe();
    this.#resolve?.(false);
  }

  #wake(): void {
    if (this.#resolve) this.#resolve(true);
    else this.#pending = true;
  }
}

/**
 * Publishes once the transaction the caller is inside has committed (at once outside one): for a
 * wake-up announced where the row is written, which other instances must not look for before it
 * is visible (and which cannot go through the root `Sql` from inside its own transaction).
 */
export function publishAfterCommit(bus: Bus, channel: string, payload = ""): void {
  afterCommit(() => void bus.publish(channel, payload));
}
