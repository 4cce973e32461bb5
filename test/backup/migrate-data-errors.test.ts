// gengate migrate-data's refusals (nothing written), a failure mid-copy (the database left empty, a
// re-run resumes), and verification catching a tampered target.

import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MigrateFailed, MigrateRefused, migrateData } from "../../src/backup/migrate-data.ts";
import { migratePostgres } from "../../src/db/migrate-postgres.ts";
import { PostgresSql } from "../../src/db/sql-postgres.ts";
import type { S3BlobBackend } from "../../src/files/blob-backend-s3.ts";
import { onPostgres } from "../helpers/backend.ts";
import { migrationFixture } from "../helpers/populated-datadir.ts";
import { dialects } from "../helpers/postgres.ts";
import { startServer } from "../helpers/server.ts";

// Not in a PostgreSQL run (GENGATE_TEST_BACKEND=postgres): the source must be a SQLite data dir, and
// the normal run covers migrate-data, its PostgreSQL target included.
const hasPg = dialects().includes("postgres") && !onPostgres;

describe.skipIf(!hasPg)("migrate-data refuses, fails cleanly, and catches a tampered copy", () => {
  const fixture = migrationFixture();
  const setup = () => fixture.setup();
  const s3 = { store: () => fixture.s3().store() };
  const createTestDatabase = () => fixture.database();

  async function withPg<T>(url: string, fn: (pg: PostgresSql) => Promise<T>): Promise<T> {
    const pg = PostgresSql.connect({ url, password: null });
    try {
      return await fn(pg);
    } finally {
      await pg.close();
    }
  }

  const tablesOf = (url: string) =>
    withPg(url, (pg) =>
      pg.all<{ t: string }>(
        "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
      ),
    );

  function editSource(dataDir: string, fn: (db: Database) => void): void {
    const db = new Database(join(dataDir, "gengate.db"), { strict: true, safeIntegers: true });
    try {
      fn(db);
    } finally {
      db.close();
    }
  }

  async function keys(store: S3BlobBackend): Promise<string[]> {
    const out: string[] = [];
    for await (const o of store.list("")) out.push(o.key);
    return out;
  }

  test("a running server on the source: refused, nothing written", async () => {
    const { dataDir, db, target, options } = await setup();
    const server = await startServer({ dataDir });
    try {
      await expect(migrateData(options)).rejects.toThrow(/in use: stop the gengate server/);
    } finally {
      await server.stop("SIGKILL"); // its WAL is left behind: the copy must read through it
      server.cleanup();
    }
    expect(await tablesOf(db.url)).toEqual([]);
    expect(await keys(target)).toEqual([]);
    // Once stopped (killed), the same data dir migrates, its WAL included.
    expect((await migrateData(options)).verified).toBe(true);
  }, 60_000);

  test("a non-empty target database: a second copy into it, foreign tables, a newer schema", async () => {
    const { options } = await setup();
    expect((await migrateData(options)).verified).toBe(true);
    await expect(migrateData({ ...options, targetBlobs: s3.store() })).rejects.toThrow(
      /the target database is not empty: table \w+ has rows/,
    );
    // --verify-only on the finished copy: equal.
    expect((await migrateData({ ...options, mode: "verify" })).verified).toBe(true);

    const foreign = await createTestDatabase();
    await withPg(foreign.url, (pg) => pg.run("CREATE TABLE customers (id BIGINT)"));
    await expect(
      migrateData({ ...options, target: { url: foreign.url, password: null }, targetBlobs: s3.store() }),
    ).rejects.toThrow(/not gengate's \(customers\)/);

    // A migrated schema is empty; its seeded storage_usage row counting bytes is not.
    const migrated = await createTestDatabase();
    const other = { ...options, target: { url: migrated.url, password: null } };
    await withPg(migrated.url, (pg) => migratePostgres(pg));
    expect((await migrateData({ ...other, targetBlobs: s3.store(), mode: "dry-run" })).rows).toBeGreaterThan(
      0,
    );
    await withPg(migrated.url, (pg) => pg.run("UPDATE storage_usage SET bytes = 1 WHERE kind = 'uploads'"));
    await expect(migrateData({ ...other, targetBlobs: s3.store() })).rejects.toThrow(
      /table storage_usage has rows/,
    );

    const newer = await createTestDatabase();
    await withPg(newer.url, async (pg) => {
      await pg.run(
        "CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)",
      );
      await pg.run("INSERT INTO schema_migrations VALUES (999, 'future', 0)");
    });
    await expect(
      migrateData({ ...options, target: { url: newer.url, password: null }, targetBlobs: s3.store() }),
    ).rejects.toThrow(/schema version 999 is newer/);
  }, 60_000);

  test("a bucket prefix holding other objects, or other bytes under gengate's keys: refused", async () => {
    const { db, target, options } = await setup();
    await target.put("backups/old.tar", new Uint8Array([1, 2, 3]), "application/x-tar");
    await expect(migrateData(options)).rejects.toThrow(/bucket prefix .* is not empty \(1 objects/);
    const other = s3.store();
    const peek = new Database(join(options.dataDir, "gengate.db"), { readonly: true });
    const { path } = peek.query("SELECT path FROM job_outputs LIMIT 1").get() as { path: string };
    peek.close();
    await other.put(path, new Uint8Array([9, 9, 9]), "image/png");
    await expect(migrateData({ ...options, targetBlobs: other })).rejects.toThrow(/with other bytes/);
    expect(await tablesOf(db.url)).toEqual([]);
  }, 60_000);

  test("a source schema this gengate does not know, a ledger that does not add up, a missing file", async () => {
    const a = await setup();
    editSource(a.dataDir, (d) => d.run("INSERT INTO schema_migrations VALUES (999, 'future', 0)"));
    await expect(migrateData(a.options)).rejects.toThrow(
      /schema version 999 is newer than this gengate knows/,
    );

    const b = await setup();
    editSource(b.dataDir, (d) =>
      d.run("UPDATE accounts SET balance_micro = balance_micro + 1 WHERE name = 'default'"),
    );
    await expect(migrateData(b.options)).rejects.toThrow(/the source's ledger does not add up/);

    const c = await setup();
    let removed = "";
    editSource(c.dataDir, (d) => {
      removed = (d.query("SELECT path FROM files LIMIT 1").get() as { path: string }).path;
    });
    rmSync(join(c.dataDir, "files", removed));
    await expect(migrateData(c.options)).rejects.toThrow(
      new RegExp(`missing or of the wrong size .*${removed}`),
    );
    for (const x of [a, b, c]) {
      expect(await tablesOf(x.db.url)).toEqual([]);
      expect(await keys(x.target)).toEqual([]);
    }
    // Refusals leave the source as it was: it is not locked any more either.
    expect(() =>
      editSource(a.dataDir, (d) => d.run("DELETE FROM schema_migrations WHERE version = 999")),
    ).not.toThrow();
  }, 60_000);

  test("a row PostgreSQL refuses mid-copy: no row is left in the target; after the fix a re-run resumes", async () => {
    const { dataDir, db, options } = await setup();
    // SQLite stores a NUL character in text; PostgreSQL refuses it (docs/scale-out.md).
    editSource(dataDir, (d) =>
      d
        .query("UPDATE job_logs SET message = ? WHERE n = (SELECT min(n) FROM job_logs)")
        .run("bad \u0000 byte"),
    );
    await expect(migrateData(options)).rejects.toThrow(
      /table job_logs: PostgreSQL refused rows 1-\d+ \(invalid byte sequence for encoding "UTF8": 0x00\); nothing was committed/,
    );
    const counts = await withPg(db.url, (pg) =>
      pg.get<{ a: bigint; l: bigint; j: bigint }>(
        "SELECT (SELECT count(*) FROM accounts) AS a, (SELECT count(*) FROM ledger_entries) AS l, (SELECT count(*) FROM jobs) AS j",
      ),
    );
    expect(counts).toEqual({ a: 0n, l: 0n, j: 0n });
    editSource(dataDir, (d) =>
      d.run("UPDATE job_logs SET message = 'fixed' WHERE n = (SELECT min(n) FROM job_logs)"),
    );
    const again = await migrateData(options);
    expect(again.verified).toBe(true);
    expect(again.files_already_present).toBe(again.files);
  }, 60_000);

  test("a damaged source file (its row's SHA-256 no longer matches) fails the copy before any row", async () => {
    const { dataDir, db, options } = await setup();
    let path = "";
    let size = 0n;
    editSource(dataDir, (d) => {
      ({ path, size } = d.query("SELECT path, size FROM job_outputs LIMIT 1").get() as {
        path: string;
        size: bigint;
      });
    });
    writeFileSync(join(dataDir, "files", path), new Uint8Array(Number(size)));
    await expect(migrateData(options)).rejects.toThrow(
      new MigrateFailed(
        `${path} in file:${join(dataDir, "files")} does not match its row's SHA-256 (the source is damaged)`,
      ),
    );
    expect(await withPg(db.url, (pg) => pg.get("SELECT 1 AS x FROM accounts"))).toBeNull();
  }, 60_000);

  test("verification catches a tampered target: a balance, a row, a missing row, a file", async () => {
    const { db, target, options } = await setup();
    expect((await migrateData(options)).verified).toBe(true);
    const account = await withPg(db.url, async (pg) => {
      await pg.run("UPDATE accounts SET balance_micro = balance_micro + 5 WHERE name = 'default'");
      await pg.run("UPDATE jobs SET input = '{}' WHERE id = (SELECT min(id) FROM jobs)");
      await pg.run(
        "DELETE FROM job_logs WHERE (job_id, n) = (SELECT job_id, n FROM job_logs ORDER BY job_id, n LIMIT 1)",
      );
      return (await pg.get<{ id: string }>("SELECT id FROM accounts WHERE name = 'default'"))!.id;
    });
    const peek = new Database(join(options.dataDir, "gengate.db"), { readonly: true });
    const { path } = peek.query("SELECT path FROM files LIMIT 1").get() as { path: string };
    peek.close();
    await target.put(path, new Uint8Array([1, 2, 3, 4]), "image/png");

    let failure: MigrateFailed | null = null;
    try {
      await migrateData({ ...options, mode: "verify" });
    } catch (err) {
      failure = err as MigrateFailed;
    }
    expect(failure).toBeInstanceOf(MigrateFailed);
    const problems = failure!.problems.join("\n");
    expect(problems).toContain("table accounts: the rows differ");
    expect(problems).toContain("table jobs: the rows differ");
    expect(problems).toMatch(/table job_logs: \d+ rows in the data dir, \d+ in the target/);
    expect(problems).toContain(`target: account ${account} balance`);
    expect(problems).toContain(`account ${account}: balance/held`);
    expect(problems).toContain(`file ${path}: SHA-256`);
    expect(problems).toContain("in the target store");
    expect(failure!.problems.some((p) => p.includes("in the data dir's store"))).toBe(false);
  }, 60_000);

  test("MigrateRefused is what every refusal throws", async () => {
    const { options } = await setup();
    await expect(
      migrateData({ ...options, dataDir: join(options.dataDir, "nowhere") }),
    ).rejects.toBeInstanceOf(MigrateRefused);
  });
});
