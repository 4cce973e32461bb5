import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import type { Sql } from "../../src/db/sql.ts";

const ROOT = resolve(import.meta.dir, "../..");

/**
 * The command that runs gengate: the compiled binary when GENGATE_BIN is set (CI runs the
 * black-box suite against dist/gengate), otherwise the sources under the current bun.
 */
export function gengateCommand(): string[] {
  const bin = process.env.GENGATE_BIN;
  return bin ? [resolve(bin)] : [process.execPath, "run", join(ROOT, "src/main.ts")];
}

export function tempDir(prefix = "gengate-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a gengate command to completion (e.g. `version`, or a `serve` expected to fail). */
export async function runGengate(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 20_000,
): Promise<RunResult> {
  const dir = args.indexOf("--data-dir");
  const known = dir >= 0 ? databases.get(args[dir + 1] ?? "") : undefined;
  return await runCommand(
    [...gengateCommand(), ...args],
    { ...process.env, GENGATE_CONFIG: "", ...(known ? { GENGATE_DATABASE_URL: known } : {}), ...env },
    timeoutMs,
  );
}

/** Runs a command to completion with this environment, killed after `timeoutMs`. */
export async function runCommand(
  cmd: string[],
  env: Record<string, string | undefined>,
  timeoutMs: number,
): Promise<RunResult> {
  const proc = Bun.spawn(cmd, { env, stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

export interface TestServer {
  url: string;
  dataDir: string;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** Everything the process printed on stdout so far. */
  output(): string;
  /** Everything the process printed on stderr so far. */
  stderr(): string;
  defaultKey: string | null;
  adminToken: string | null;
  /** The first start's one-time console invite (owner and operator of "default"), else null. */
  ownerInvite: string | null;
  fetch(path: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
  /** Sends SIGTERM and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number>;
  cleanup(): void;
}

const databases = new Map<string, string>();

/**
 * GENGATE_TEST_BACKEND=postgres: each data dir's server runs on its own fresh PostgreSQL database
 * (test/helpers/postgres.ts), the same one again when the server is restarted on that data dir;
 * `runGengate` with `--data-dir` of such a server uses it too.
 */
export async function testDatabaseEnv(dataDir: string): Promise<Record<string, string>> {
  if (process.env.GENGATE_TEST_BACKEND !== "postgres") return {};
  let url = databases.get(dataDir);
  if (!url) {
    const { createTestDatabase } = await import("./postgres.ts");
    url = (await createTestDatabase()).url;
    databases.set(dataDir, url);
  }
  return { GENGATE_DATABASE_URL: url };
}

/**
 * A connection to the database of a server's data dir, whichever backend it runs on: the SQLite
 * file (read-only unless `write`), or the PostgreSQL database GENGATE_TEST_BACKEND=postgres gave it.
 * `create`: a data dir no server has used yet gets its database now (the SQLite file, or a fresh
 * PostgreSQL database that later servers and `runGengate` on that data dir use), migrated; implies
 * `write`.
 */
export async function openServerSql(
  dataDir: string,
  options: { write?: boolean; create?: boolean } = {},
): Promise<{ sql: Sql; close(): Promise<void> }> {
  if (options.create) await testDatabaseEnv(dataDir);
  const url = databases.get(dataDir);
  if (url) {
    const { PostgresSql } = await import("../../src/db/sql-postgres.ts");
    const sql = PostgresSql.connect({ url, password: null, maxConnections: 1 });
    if (options.create) {
      const { migratePostgres } = await import("../../src/db/migrate-postgres.ts");
      await migratePostgres(sql);
    }
    return { sql, close: () => sql.close() };
  }
  const { Database } = await import("bun:sqlite");
  const { SqliteSql } = await import("../../src/db/sql-sqlite.ts");
  let db: import("bun:sqlite").Database;
  if (options.create) {
    const { migrate, openDatabase } = await import("../../src/db/database.ts");
    db = openDatabase(join(dataDir, "gengate.db"));
    migrate(db);
  } else {
    db = new Database(join(dataDir, "gengate.db"), {
      readonly: !options.write,
      safeIntegers: true,
      strict: true,
    });
  }
  const sql = new SqliteSql(db);
  return {
    sql,
    close: async () => {
      sql.close();
      db.close();
    },
  };
}

/** Runs `fn` over a connection to the server's database (see openServerSql), closed afterwards. */
export async function withServerSql<T>(
  dataDir: string,
  fn: (sql: Sql) => Promise<T>,
  options: { write?: boolean; create?: boolean } = {},
): Promise<T> {
  const db = await openServerSql(dataDir, options);
  try {
    return await fn(db.sql);
  } finally {
    await db.close();
  }
}

/** Starts `gengate serve` on a free port and a data dir (a new temp dir unless given). */
export async function startServer(
  options: { dataDir?: string; args?: string[]; env?: Record<string, string> } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDir();
  const database = await testDatabaseEnv(dataDir);
  const proc = Bun.spawn(
    [...gengateCommand(), "serve", "--port", "0", "--data-dir", dataDir, ...(options.args ?? [])],
    {
      env: { ...process.env, GENGATE_CONFIG: "", ...database, ...options.env },
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
    },
  );
  let out = "";
  let err = "";
  const decoder = new TextDecoder();
  const listeners: (() => void)[] = [];
  void (async () => {
    for await (const chunk of proc.stdout) {
      out += decoder.decode(chunk, { stream: true });
      for (const fn of listeners) fn();
    }
  })();
  void (async () => {
    for await (const chunk of proc.stderr) err += decoder.decode(chunk, { stream: true });
  })();

  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}\n${err}`)), 20_000);
    const check = () => {
      const m = /"msg":"listening","url":"([^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]!);
      }
    };
    listeners.push(check);
    proc.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${out}\n${err}`));
    });
    check();
  });

  const defaultKey = /Default API key[^:]*:\s+(gk_\w+)/.exec(out)?.[1] ?? null;
  const adminToken = /Admin token[^:]*:\s+(gat_\w+)/.exec(out)?.[1] ?? null;
  const ownerInvite = /Console sign-up link[^:]*:\s+(\S+)/.exec(out)?.[1] ?? null;
  return {
    url,
    dataDir,
    proc,
    output: () => out,
    stderr: () => err,
    defaultKey,
    adminToken,
    ownerInvite,
    fetch(path, init = {}) {
      const headers = new Headers(init.headers);
      const k = init.key === undefined ? defaultKey : init.key;
      if (k) headers.set("authorization", `Key ${k}`);
      return fetch(`${url}${path}`, { ...init, headers });
    },
    async stop(signal = "SIGTERM") {
      proc.kill(signal);
      return await proc.exited;
    },
    cleanup() {
      if (proc.exitCode === null) proc.kill("SIGKILL");
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A local port nothing listens on now (a server's fixed port across restarts; a refused connection). */
export function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}
