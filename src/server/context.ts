import type { Database } from "bun:sqlite";
import type { Catalog } from "../catalog/catalog.ts";
import type { LiveSettings, ServerSettings } from "../config/schema.ts";
import type { Bus } from "../db/bus.ts";
import type { CacheInvalidation } from "../db/invalidation.ts";
import type { Leadership } from "../db/leader.ts";
import type { Sql } from "../db/sql.ts";
import type { QueueServices } from "../queue/runtime.ts";
import type { Services } from "./services.ts";

/**
 * Everything a request handler may need, built once at start-up. `catalog` and `live` are
 * swapped whole on reload (SIGHUP), so handlers must read them through this object each time.
 */
export interface AppContext extends Services, QueueServices {
  /** The database (docs/architecture.md "Stores and transactions"). */
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
  /** Absolute public address, e.g. "https://gen.example.com"; {base_url} is publicUrl + "/v1". */
  publicUrl: string;
  /** SHA-256 of the operator admin token. */
  adminTokenHash: Uint8Array;
  version: string;
  /** Aborted when the server begins to stop: ends /run waits and status streams. */
  shutdownSignal: AbortSignal;
  startedAt: number;
}

export function baseUrl(ctx: Pick<AppContext, "publicUrl">): string {
  return `${ctx.publicUrl}/v1`;
}
