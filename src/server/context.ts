// The declared shapes of what the wiring (src/app/) builds: `Services`, `QueueServices`, `AppContext`.
// Types only, so any module may import them (`import type`) without loading the wiring: a route
// module types its `ctx`, a service names the few members it uses (`Pick<AppContext, ...>`). The
// wiring implements them (src/app/services.ts, src/app/queue-services.ts, src/app/app-context.ts);
// tsc checks that what it builds matches member by member.
import type { Database } from "bun:sqlite";
import type { AccountStore } from "../accounts/store.ts";
import type { LowBalanceAlerts } from "../alerts/alerts.ts";
import type { Catalog } from "../catalog/catalog.ts";
import type { CodeService } from "../codes/service.ts";
import type { LiveSettings, ServerSettings } from "../config/schema.ts";
import type { Bus } from "../db/bus.ts";
import type { GroupCommit } from "../db/group-commit.ts";
import type { CacheInvalidation } from "../db/invalidation.ts";
import type { Leadership } from "../db/leader.ts";
import type { Sql } from "../db/sql.ts";
import type { BlobBackend } from "../files/blob-backend.ts";
import type { InputReader } from "../files/input-reader.ts";
import type { JobOutputStore } from "../files/job-output-store.ts";
import type { OutputWriter } from "../files/output-writer.ts";
import type { LinkSigner } from "../files/signing.ts";
import type { FileStore } from "../files/store.ts";
import type { FxStore } from "../fx/store.ts";
import type { IdempotencyStore } from "../idempotency/idempotency.ts";
import type { HoldRow, Ledger } from "../ledger/ledger.ts";
import type { LedgerRetentionStore } from "../ledger/ledger-retention.ts";
import type { MarginStore } from "../ledger/margin-store.ts";
import type { Wallet } from "../ledger/wallet.ts";
import type { WriteRateLimit } from "../limits/rate-limit.ts";
import type { Mailer } from "../mail/mailer.ts";
import type { Metrics } from "../metrics/metrics.ts";
import type { PaymentService } from "../payments/service.ts";
import type { People } from "../people/service.ts";
import type { CircuitBreaker } from "../providers/circuit.ts";
import type { CogWebhooks } from "../providers/cog/webhooks.ts";
import type { RandomSource } from "../providers/routes.ts";
import type { Provider } from "../providers/types.ts";
import type { JobEvents } from "../queue/events.ts";
import type { JobLogStore } from "../queue/job-log-store.ts";
import type { JobRetentionStore } from "../queue/job-retention-store.ts";
import type { JobRow } from "../queue/job-row.ts";
import type { JobStatsStore } from "../queue/job-stats-store.ts";
import type { JobStore } from "../queue/job-store.ts";
import type { listItemView, queuedRequestView, recordView, statusView } from "../queue/views.ts";
import type { WebhookOutbox } from "../webhooks/outbox.ts";
import type { WebhookSecretStore } from "../webhooks/secret-store.ts";

/** The domain services over one database, shared by the server, the CLI and tests (built by `createServices`). */
export interface Services {
  /** The database they all write to. */
  sql: Sql;
  /** Accounts and API keys. */
  accounts: AccountStore;
  /** Holds, charges and ledger entries: every balance movement. */
  ledger: Ledger;
  /** Redeem codes: batches, codes, redeem. */
  codes: CodeService;
  /** Card top-ups: orders, checkout, notifications, refunds. */
  payments: PaymentService;
  /** USD->RUB exchange rates. */
  fx: FxStore;
  /** The ledger's read side: entries and spend. */
  wallet: Wallet;
  /** Deletes money history past [retention] ledger_days (the ledger-retention sweep). */
  ledgerRetention: LedgerRetentionStore;
  /** The margins report's reads: jobs with their holds, by date range. */
  margins: MarginStore;
  /** Console people, one service per concern (sign-in, sessions, invites, resets, two-factor, members). */
  people: People;
  /** `[smtp]` mail through the outbox. */
  mailer: Mailer;
  /** The low-balance alert, the ledger's balance watcher. */
  alerts: LowBalanceAlerts;
}

/** How a job row is rendered in the API's answers, with fresh signed output links (src/queue/views.ts). */
export interface JobViews {
  /**
   * The 202 of a submit. `tx`: rendered inside the transaction that opened the job (its stored
   * Idempotency answer). `hold`: the job's hold as the reservation returned it, so a submit's 202
   * does not read it again (7 us of every submit).
   */
  queued(job: JobRow, at?: { tx?: Sql; hold?: HoldRow | null }): ReturnType<typeof queuedRequestView>;
  status(job: JobRow, withLogs: boolean): ReturnType<typeof statusView>;
  record(job: JobRow): ReturnType<typeof recordView>;
  listItem(job: JobRow): ReturnType<typeof listItemView>;
  /** The job's output with its file references replaced by signed links. */
  output(job: JobRow): Promise<unknown>;
}

/** The queue's collaborators over one database (built by `createQueueServices`). */
export interface QueueServices {
  /** Prometheus counters and histograms. */
  metrics: Metrics;
  /** A job's state changes, to every instance's waiters. */
  events: JobEvents;
  /** The jobs table: the state machine. */
  jobs: JobStore;
  /** A job's output rows and downloads. */
  jobOutputs: JobOutputStore;
  /** A job's log lines. */
  jobLogs: JobLogStore;
  /** Counts and latency over a filter of an account's jobs (the console's requests figures). */
  jobStats: JobStatsStore;
  /** Where stored bytes live (local directory or S3). */
  blobs: BlobBackend;
  /** Output bytes written to and read from the blob store. */
  outputs: OutputWriter;
  /** Uploads and outputs: rows, expiry, sweep. */
  files: FileStore;
  /** Signs and verifies output and file links. */
  signer: LinkSigner;
  views: JobViews;
  /** Provider name -> its adapter, filled at start and on reload. */
  providers: Map<string, Provider>;
  /** Provider name -> its circuit breaker. */
  circuits: Map<string, CircuitBreaker>;
  /** Weighted routing's draw (ModelDeps.routeRandom): Math.random when absent; seeded in tests. */
  routeRandom?: RandomSource;
  /** Webhook deliveries due. */
  outbox: WebhookOutbox;
  /** Each account's webhook signing secrets. */
  webhookSecrets: WebhookSecretStore;
  /** Wakes every instance's webhook dispatcher once the current transaction commits. */
  webhookWaker: { wake(): void };
  /** Idempotency-Key claims and stored answers. */
  idempotency: IdempotencyStore;
  /** Submits committed together (group commit). */
  submits: GroupCommit;
  /** The per-key write rate limit. */
  rateLimiter: WriteRateLimit;
  /** A `webhook_url` checked against the live webhook policy (SSRF rules); the parsed URL. */
  checkWebhookUrl(raw: string): Promise<URL>;
  /** How a provider reads an input file (ProviderJob.readInput, src/files/input-reader.ts). */
  readInput: InputReader;
  /** cog servers' webhooks: signed URLs, the durable final answers, the workers' waits. */
  cogWebhooks: CogWebhooks;
  /** Deletes finished requests' records past [retention] requests_days (the request-retention sweep). */
  jobRetention: JobRetentionStore;
}

/**
 * Everything a request handler may need, built once at start-up. `catalog` and `live` are
 * swapped whole on reload (SIGHUP), so handlers must read them through this object each time.
 */
export interface AppContext extends Services, QueueServices {
  /** The database (docs/architecture.md "Stores and their tables"). */
  sql: Sql;
  /** The SQLite connection under `sql`, for SQLite-only features (backup, PRAGMA checks); null on PostgreSQL. */
  sqlite: Database | null;
  /** Hints to every instance (LISTEN/NOTIFY on PostgreSQL, in process on SQLite): src/db/bus.ts. */
  bus: Bus;
  /** One instance at a time runs each sweep: src/db/leader.ts. */
  leadership: Leadership;
  /** Cache scopes every instance drops within 1 s of a change: src/db/invalidation.ts. */
  invalidation: CacheInvalidation;
  catalog: Catalog;
  live: LiveSettings;
  settings: ServerSettings;
  /** Absolute public address, e.g. "https://gen.example.com"; {base_url} is `baseUrl(ctx)` (src/lib/url.ts). */
  publicUrl: string;
  /** SHA-256 of the operator admin token. */
  adminTokenHash: Uint8Array;
  version: string;
  /** Aborted when the server begins to stop: ends /run waits and status streams. */
  shutdownSignal: AbortSignal;
  startedAt: number;
}
