import type { Database } from "bun:sqlite";
import type { Account } from "../accounts/store.ts";
import { buildCatalog, type Catalog, CatalogError } from "../catalog/catalog.ts";
import { liveSettingsFrom, readConfigFile } from "../config/load.ts";
import type { ConfigFile, LiveSettings, ServerSettings } from "../config/schema.ts";
import { type Bus, openBus, publishAfterCommit } from "../db/bus.ts";
import { migrate, openDatabase } from "../db/database.ts";
import { CacheInvalidation } from "../db/invalidation.ts";
import { openLeadership } from "../db/leader.ts";
import type { Sql } from "../db/sql.ts";
import { SqliteSql } from "../db/sql-sqlite.ts";
import type { BlobBackend } from "../files/blob-backend.ts";
import { DomainError } from "../lib/errors.ts";
import { MAIL_CHANNEL } from "../mail/sender.ts";
import { validateProviderModels } from "../providers/registry.ts";
import type { AppContext } from "../server/context.ts";
import { VERSION } from "../server/version.ts";
import { WEBHOOKS_CHANNEL } from "../webhooks/dispatcher.ts";
import { createQueueServices } from "./queue-services.ts";
import { createServices } from "./services.ts";

/** The live part of the configuration: settings re-read on reload and the catalog built from them. */
export interface LoadedLive {
  live: LiveSettings;
  catalog: Catalog;
}

/** Loads the live part of the configuration: config file (if any) and the catalog built from it. */
export function loadLive(configPath: string | null): LoadedLive {
  return liveFromConfig(configPath ? readConfigFile(configPath) : null);
}

/** The live settings and catalog of a parsed configuration, with every model checked against its provider. */
export function liveFromConfig(file: ConfigFile | null): LoadedLive {
  const live: LiveSettings = liveSettingsFrom(file);
  const catalog = buildCatalog(live.models, {
    sandbox: live.sandbox,
    providers: Object.fromEntries(Object.entries(live.providers).map(([n, p]) => [n, p.type])),
  });
  // Each provider type's own checks of its models (ComfyUI: workflows and their placeholders).
  try {
    validateProviderModels(live, catalog);
  } catch (err) {
    throw new CatalogError((err as Error).message);
  }
  return { live, catalog };
}

export interface AppContextOptions extends LoadedLive {
  /** A migrated database; omitted: a fresh in-memory SQLite one (tests). */
  sql?: Sql;
  /** The SQLite connection under `sql` (null on PostgreSQL). */
  sqlite?: Database | null;
  /** The bus to use instead of the one `settings.database` names (tests: a bus that loses hints). */
  bus?: Bus;
  settings: ServerSettings;
  /** Absolute public address without a trailing slash; {base_url} is publicUrl + "/v1". */
  publicUrl: string;
  /** Where uploads and outputs are stored (<data dir>/files). */
  filesRoot: string;
  /** The blob store the bytes go to (src/files/blob-backend.ts); default: the directory filesRoot. */
  blobs?: BlobBackend;
  /** Output and file link signing secrets; the first signs, all verify. */
  linkSecrets: string[];
  /** SHA-256 of the operator admin token. */
  adminTokenHash: Uint8Array;
  /** Default: the build's version. */
  version?: string;
  /** The ledger's and the people service's clock (epoch ms); default Date.now. */
  now?: () => number;
  /** argon2id cost of console passwords; default Bun's (tests lower it). */
  passwordCost?: { memoryCost: number; timeCost: number };
}

export interface CreatedAppContext {
  ctx: AppContext;
  /** Aborting it ends long waits (/run, status streams): the server begins to stop. */
  shutdown: AbortController;
  /** The account and key created because the database had no account yet (shown once), else null. */
  defaultKey: { account: Account; keyId: string; key: string } | null;
  /** With defaultKey: a one-time console invite for an owner (and operator) of "default", else null. */
  ownerInvite: { url: string; expiresAt: number } | null;
}

/**
 * The one wiring of gengate's services over a database, used by the server (src/app/start.ts)
 * and by the tests' in-process app: stores, ledger, queue, files, webhooks and providers. A
 * database without accounts gets the "default" account (USD) and its first key.
 */
export async function createAppContext(o: AppContextOptions): Promise<CreatedAppContext> {
  let sql = o.sql;
  let sqlite = o.sqlite ?? null;
  if (!sql) {
    sqlite = openDatabase(":memory:");
    migrate(sqlite);
    sql = new SqliteSql(sqlite);
  }
  // Across instances (docs/scale-out.md): hints between instances, one sweeper per name, and the
  // version table that tells every instance's caches to drop what another one changed. On SQLite
  // (one instance) all three work in process; the invalidation poll also sees the operator CLI.
  const database = o.settings.database ?? { kind: "sqlite" as const };
  const bus = o.bus ?? openBus(database, sql);
  const leadership = openLeadership(database);
  const invalidation = new CacheInvalidation(sql, bus);
  await invalidation.start();
  const services = createServices(sql, o.publicUrl, o.now, {
    console: () => ctx.live.console,
    payments: () => ctx.live.payments,
    passwordCost: o.passwordCost,
    smtp: () => ctx.live.smtp,
    invalidation,
  });
  // Outbox wake-ups reach every instance's dispatcher and mail sender, once the row committed.
  services.alerts.wakeWebhooks = () => publishAfterCommit(bus, WEBHOOKS_CHANNEL);
  services.mailer.wake = () => publishAfterCommit(bus, MAIL_CHANNEL);
  // Instances starting together on an empty PostgreSQL database: one creates "default", the
  // others find the name taken (a conflict) and start as a later start would.
  const defaultKey =
    (await services.accounts.countAccounts()) === 0
      ? await services.accounts.createAccount("default", "USD").catch((err: unknown) => {
          if (err instanceof DomainError && err.code === "conflict") return null;
          throw err;
        })
      : null;
  const ownerInvite = defaultKey
    ? await services.people.invites.createInvite({
        accountId: defaultKey.account.id,
        role: "owner",
        operator: true,
      })
    : null;
  const queue = createQueueServices(sql, services, {
    publicUrl: o.publicUrl,
    baseUrl: `${o.publicUrl}/v1`,
    filesRoot: o.filesRoot,
    blobs: o.blobs,
    linkSecrets: o.linkSecrets,
    webhookPolicy: () => ctx.live.webhooks,
    live: o.live,
    bus,
  });
  const shutdown = new AbortController();
  await queue.jobs.whenReady();
  const ctx: AppContext = {
    sqlite,
    bus,
    leadership,
    invalidation,
    shutdownSignal: shutdown.signal,
    ...services,
    ...queue,
    catalog: o.catalog,
    live: o.live,
    settings: o.settings,
    publicUrl: o.publicUrl,
    adminTokenHash: o.adminTokenHash,
    version: o.version ?? VERSION,
    startedAt: Date.now(),
  };
  return {
    ctx,
    shutdown,
    defaultKey,
    ownerInvite: ownerInvite && { url: ownerInvite.url, expiresAt: ownerInvite.expiresAt },
  };
}
