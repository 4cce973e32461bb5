import { existsSync, readFileSync } from "node:fs";
import type { DatabaseSettings } from "../config/schema.ts";
import type { CacheInvalidation } from "../db/invalidation.ts";
import type { Sql } from "../db/sql.ts";
import { hashSecret } from "../lib/api-keys.ts";
import { errorFields, log } from "../lib/log.ts";
import { nowSeconds } from "../lib/time.ts";
import {
  type DataDirPaths,
  linkSecrets,
  newAdminToken,
  newServerSecret,
  readOrCreateSecret,
} from "./datadir.ts";

/**
 * The secrets every instance must share (docs/scale-out.md "Shared secrets"): the link-signing secrets
 * and the admin token. On SQLite they are the data dir's files, as always (datadir.ts). On PostgreSQL
 * they are rows of `shared_secrets` (migration 018), so instances on several hosts sign and verify the same
 * links and accept the same admin token:
 * - created once under a race: `INSERT .. ON CONFLICT DO NOTHING`, then read back, so instances
 *   starting together agree; the instance whose insert won prints the new admin token once;
 * - the admin token is kept as its SHA-256 only (hex), like every other secret gengate checks;
 * - a data dir that already has the files (a box moved over with `gengate migrate-data`) seeds the
 *   rows from them at the first start, so its admin token and signed links stay valid;
 * - `gengate secret rotate` rewrites the rows in one transaction that bumps cache scope
 *   `settings`; every instance re-reads them within 1 s (`follow`). docs/scale-out.md "Shared secrets".
 */
export const LINK_SECRET = "link_secret";
export const PREVIOUS_LINK_SECRET = "link_secret_previous";
export const ADMIN_TOKEN_SHA256 = "admin_token_sha256";
/** The cache scope of settings kept in the database (src/db/invalidation.ts). */
export const SETTINGS_SCOPE = "settings";

/**
 * Reads the shared secret `name`, or stores `value` as it if there is none. Two instances racing
 * agree: the second insert waits for the first's commit and inserts nothing, and both read the
 * winner's value back. `created`: this call's value was stored.
 */
export async function readOrCreateSharedSecret(
  sql: Sql,
  name: string,
  value: string,
): Promise<{ value: string; created: boolean }> {
  const inserted = await sql.get<{ value: string }>(
    `INSERT INTO shared_secrets (name, value, created_at) VALUES (?, ?, ?)
     ON CONFLICT (name) DO NOTHING RETURNING value`,
    [name, value, nowSeconds()],
  );
  if (inserted) return { value: inserted.value, created: true };
  const row = await sql.get<{ value: string }>("SELECT value FROM shared_secrets WHERE name = ?", [name]);
  if (!row) throw new Error(`shared secret ${name}: neither inserted nor found`);
  return { value: row.value, created: false };
}

/** The link-signing secrets in the database, current first, then the previous one if any. */
export async function sharedLinkSecrets(sql: Sql): Promise<string[]> {
  const rows = await sql.all<{ name: string; value: string }>(
    "SELECT name, value FROM shared_secrets WHERE name IN (?, ?)",
    [LINK_SECRET, PREVIOUS_LINK_SECRET],
  );
  const of = (name: string) => rows.find((r) => r.name === name)?.value;
  const current = of(LINK_SECRET);
  if (!current) throw new Error("no link-signing secret in the database: start gengate serve once");
  const previous = of(PREVIOUS_LINK_SECRET);
  return previous ? [current, previous] : [current];
}

/**
 * `gengate secret rotate` on PostgreSQL: the current secret becomes the previous one (links it
 * signed stay valid until they expire), a new one signs; in one transaction bumping scope
 * `settings`, announced after the commit so every instance picks it up within 1 s.
 */
export async function rotateSharedLinkSecret(sql: Sql, invalidation: CacheInvalidation): Promise<void> {
  const bumped = await sql.tx(async (tx) => {
    const current = await tx.get<{ value: string }>(
      `SELECT value FROM shared_secrets WHERE name = ?${tx.dialect === "postgres" ? " FOR UPDATE" : ""}`,
      [LINK_SECRET],
    );
    if (!current) throw new Error("no link-signing secret in the database: start gengate serve once");
    const put = `INSERT INTO shared_secrets (name, value, created_at) VALUES (?, ?, ?)
      ON CONFLICT (name) DO UPDATE SET value = excluded.value, created_at = excluded.created_at`;
    await tx.run(put, [PREVIOUS_LINK_SECRET, current.value, nowSeconds()]);
    await tx.run(put, [LINK_SECRET, newServerSecret(), nowSeconds()]);
    return await invalidation.bump(tx, SETTINGS_SCOPE);
  });
  await invalidation.announce(bumped);
}

/**
 * `gengate secret admin-token` on PostgreSQL: a new admin token (returned, shown once), its SHA-256
 * in the database in one transaction bumping scope `settings`; every instance accepts it, and
 * refuses the old one, within 1 s.
 */
export async function replaceSharedAdminToken(sql: Sql, invalidation: CacheInvalidation): Promise<string> {
  const token = newAdminToken();
  const bumped = await sql.tx(async (tx) => {
    await tx.run(
      `INSERT INTO shared_secrets (name, value, created_at) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET value = excluded.value, created_at = excluded.created_at`,
      [ADMIN_TOKEN_SHA256, hashSecret(token).toString("hex"), nowSeconds()],
    );
    return await invalidation.bump(tx, SETTINGS_SCOPE);
  });
  await invalidation.announce(bumped);
  return token;
}

/** The secrets a server checks with: links it signs and verifies, the admin token's SHA-256. */
export interface CurrentSecrets {
  linkSecrets: string[];
  adminTokenHash: Uint8Array;
}

/** The secrets a server starts with, and how it follows later changes. */
export interface ServerSecrets extends CurrentSecrets {
  /** The admin token when this start created it (shown once), else null. */
  newAdminToken: string | null;
  /**
   * From now on hands `apply` the secrets after each change: on PostgreSQL every change of scope
   * `settings` (`gengate secret rotate` or `secret admin-token` anywhere, applied within 1 s), and
   * each `reload`.
   */
  follow(invalidation: CacheInvalidation, apply: (secrets: CurrentSecrets) => void): void;
  /**
   * SIGHUP. SQLite: re-reads the files now (a broken link secret file throws and the reload reports
   * it, as always; an unreadable admin.token keeps the token in use). PostgreSQL: re-reads the rows
   * in the background.
   */
  reload(): void;
  /** Stops following (at shutdown), once a re-read under way has finished. */
  stop(): Promise<void>;
}

/**
 * Reads (or creates at the first start) the server's secrets: the data dir's files on SQLite, the
 * shared_secrets rows on PostgreSQL (seeded from the data dir's files when they exist).
 */
export async function openServerSecrets(
  database: DatabaseSettings,
  sql: Sql,
  paths: DataDirPaths,
): Promise<ServerSecrets> {
  let apply: (secrets: CurrentSecrets) => void = () => {};
  if (database.kind === "sqlite") {
    readOrCreateSecret(paths.serverSecret, newServerSecret); // read back by linkSecrets below
    const admin = readOrCreateSecret(paths.adminToken, newAdminToken);
    let adminTokenHash: Uint8Array = hashSecret(admin.value);
    return {
      linkSecrets: linkSecrets(paths),
      adminTokenHash,
      newAdminToken: admin.created ? admin.value : null,
      follow: (_invalidation, fn) => {
        apply = fn;
      },
      reload: () => {
        const links = linkSecrets(paths);
        const token = readSecretFileQuietly(paths.adminToken);
        if (token) adminTokenHash = hashSecret(token);
        apply({ linkSecrets: links, adminTokenHash });
      },
      stop: async () => {},
    };
  }
  const fileToken = readSecretFile(paths.adminToken);
  const token = fileToken ?? newAdminToken();
  const admin = await readOrCreateSharedSecret(sql, ADMIN_TOKEN_SHA256, hashSecret(token).toString("hex"));
  const fileSecrets = existsSync(paths.serverSecret) ? linkSecrets(paths) : null;
  const link = await readOrCreateSharedSecret(sql, LINK_SECRET, fileSecrets?.[0] ?? newServerSecret());
  if (link.created && fileSecrets?.[1])
    await readOrCreateSharedSecret(sql, PREVIOUS_LINK_SECRET, fileSecrets[1]);
  // Re-reads run one at a time, in order: an older read never overwrites a newer one.
  let chain: Promise<void> = Promise.resolve();
  const refresh = () => {
    chain = chain.then(async () => {
      try {
        apply(await sharedSecrets(sql));
      } catch (err) {
        log("error", "shared secrets: re-reading failed; the previous ones stay", errorFields(err));
      }
    });
  };
  let unwatch = () => {};
  return {
    ...(await sharedSecrets(sql)),
    newAdminToken: admin.created && fileToken === null ? token : null,
    follow: (invalidation, fn) => {
      apply = fn;
      unwatch = invalidation.watch(SETTINGS_SCOPE, refresh);
      // A change between the read above and this watch: read once more.
      refresh();
    },
    reload: refresh,
    stop: async () => {
      unwatch();
      await chain;
    },
  };
}

/** The link-signing secrets and the admin token's SHA-256 from the database. */
async function sharedSecrets(sql: Sql): Promise<CurrentSecrets> {
  const admin = await sql.get<{ value: string }>("SELECT value FROM shared_secrets WHERE name = ?", [
    ADMIN_TOKEN_SHA256,
  ]);
  if (!admin) throw new Error("no admin token in the database: start gengate serve once");
  return { linkSecrets: await sharedLinkSecrets(sql), adminTokenHash: Buffer.from(admin.value, "hex") };
}

/** A secret file's content, or null when it cannot be read or is empty. */
function readSecretFileQuietly(path: string): string | null {
  try {
    return readSecretFile(path);
  } catch {
    return null;
  }
}

/** A secret file's content, or null when there is none (an empty file is none too). */
function readSecretFile(path: string): string | null {
  try {
    return readFileSync(path, "utf8").trim() || null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}
