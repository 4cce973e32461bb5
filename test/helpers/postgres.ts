import { test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { SQL } from "bun";
import { migrate, openDatabase } from "../../src/db/database.ts";
import { migratePostgres } from "../../src/db/migrate-postgres.ts";
import type { Dialect, Sql } from "../../src/db/sql.ts";
import { PostgresSql } from "../../src/db/sql-postgres.ts";
import { SqliteSql } from "../../src/db/sql-sqlite.ts";
import { shellQuote, systemTmpdir, whenGone } from "./watchdog.ts";

/**
 * PostgreSQL for tests (docs/scale-out.md "Tests"). A fresh, empty database per caller, made on:
 * - the server named by GENGATE_TEST_PG_URL (an admin URL: it may CREATE and DROP DATABASE), else
 * - ONE throwaway cluster per test process, started on first use when `initdb` is found (PATH, then
 *   /usr/lib/postgresql/<newest>/bin, where Debian's `postgresql` package puts it): initdb into a
 *   temp dir (as `postgres`, else `nobody`, when running as root: initdb refuses root), listening on
 *   127.0.0.1 and a free port, trust auth, fsync off; stopped and deleted when the process exits.
 * Without either, PostgreSQL tests are skipped, unless GENGATE_REQUIRE_PG=1 (.ci/run sets it): then
 * `dialects()` registers a failing test saying why.
 */

const ADMIN_URL = process.env.GENGATE_TEST_PG_URL || null;
const REQUIRED = process.env.GENGATE_REQUIRE_PG === "1";

function findPgBin(): string | null {
  const onPath = Bun.which("initdb");
  if (onPath) {
    // Debian's /usr/bin has no initdb; /usr/local/bin may link to the real one.
    const dir = onPath.slice(0, onPath.lastIndexOf("/"));
    if (Bun.which("pg_ctl", { PATH: dir })) return dir;
  }
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, "bin/initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(root, versions[0]!, "bin") : null;
}

const PG_BIN = ADMIN_URL ? null : findPgBin();

/** True when PostgreSQL tests can run here. */
export const postgresAvailable = ADMIN_URL !== null || PG_BIN !== null;

/**
 * The dialects a parametrised test runs on: sqlite always, postgres when available. When it is
 * not and GENGATE_REQUIRE_PG=1, a failing test is registered in the calling file.
 */
export function dialects(): Dialect[] {
  if (postgresAvailable) return ["sqlite", "postgres"];
  if (REQUIRED) {
    test("PostgreSQL is available (GENGATE_REQUIRE_PG=1)", () => {
      throw new Error(
        "GENGATE_REQUIRE_PG=1 but no PostgreSQL: set GENGATE_TEST_PG_URL or install initdb (apt-get install postgresql)",
      );
    });
  }
  return ["sqlite"];
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function run(cmd: string[], asUser: string | null): { ok: boolean; out: string } {
  const full = asUser ? ["runuser", "-u", asUser, "--", ...cmd] : cmd;
  const r = spawnSync(full[0]!, full.slice(1), { encoding: "utf8", timeout: 60_000 });
  return { ok: r.status === 0, out: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? String(r.error) : ""}` };
}

function idOf(user: string): { uid: number; gid: number } | null {
  const u = spawnSync("id", ["-u", user], { encoding: "utf8" });
  const g = spawnSync("id", ["-g", user], { encoding: "utf8" });
  if (u.status !== 0 || g.status !== 0) return null;
  return { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/** Once the test process is gone, a watchdog stops the cluster and deletes its directory. */
function stopWhenGone(stop: string[], asUser: string | null, dir: string): void {
  const stopCmd = (asUser ? ["runuser", "-u", asUser, "--", ...stop] : stop).map(shellQuote).join(" ");
  whenGone(`${stopCmd} >/dev/null 2>&1; rm -rf ${shellQuote(dir)}`);
}

let cluster: Promise<string> | null = null;

/** Starts the process's throwaway cluster once; resolves to its admin URL. */
function startCluster(bin: string): Promise<string> {
  cluster ??= (async () => {
    const dir = mkdtempSync(join(systemTmpdir(), "gengate-pg-"));
    const data = join(dir, "data");
    let user: string | null = null;
    if (process.getuid?.() === 0) {
      user = idOf("postgres") ? "postgres" : "nobody";
      const id = idOf(user);
      if (!id) throw new Error("running as root and neither user postgres nor nobody exists");
      chownSync(dir, id.uid, id.gid);
    }
    const init = run(
      [join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "-N"],
      user,
    );
    if (!init.ok) throw new Error(`initdb failed:\n${init.out}`);
    let lastError = "";
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = await freePort();
      const options = [
        `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir}`,
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300",
      ].join(" ");
      const start = run(
        [join(bin, "pg_ctl"), "-D", data, "-l", join(dir, "log"), "-w", "-t", "60", "-o", options, "start"],
        user,
      );
      if (start.ok) {
        stopWhenGone([join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"], user, dir);
        return `postgres://postgres@127.0.0.1:${port}/postgres`;
      }
      lastError = `${start.out}\n${existsSync(join(dir, "log")) ? readFileSync(join(dir, "log"), "utf8") : ""}`;
    }
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`pg_ctl start failed:\n${lastError}`);
  })();
  return cluster;
}

let admin: SQL | null = null;

async function adminClient(): Promise<{ sql: SQL; url: string }> {
  const url = ADMIN_URL ?? (await startCluster(PG_BIN!));
  admin ??= new SQL({ url, max: 2 });
  return { sql: admin, url };
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A new, empty database; `drop()` removes it (closing its connections). */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (!postgresAvailable) throw new Error("no PostgreSQL for tests (see test/helpers/postgres.ts)");
  const { sql, url } = await adminClient();
  const name = `gengate_t_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  await sql.unsafe(`CREATE DATABASE ${name}`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

export interface TestSql {
  sql: Sql;
  close(): Promise<void>;
}

/**
 * A `Sql` of the dialect over a fresh database: SQLite in memory, or a new PostgreSQL database.
 * `migrated`: with gengate's schema applied (each dialect's own migrations).
 */
export async function openTestSql(dialect: Dialect, options: { migrated?: boolean } = {}): Promise<TestSql> {
  if (dialect === "sqlite") {
    const db = openDatabase(":memory:");
    if (options.migrated) migrate(db);
    const sql = new SqliteSql(db);
    return {
      sql,
      close: async () => {
        sql.close();
        db.close();
      },
    };
  }
  const database = await createTestDatabase();
  const sql = PostgresSql.connect({ url: database.url, password: null });
  if (options.migrated) await migratePostgres(sql);
  return {
    sql,
    close: async () => {
      await sql.close();
      await database.drop();
    },
  };
}
