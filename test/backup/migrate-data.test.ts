// gengate migrate-data (src/backup/migrate-data.ts): a data dir written by a real server, copied into
// a fresh PostgreSQL database and an s3rver bucket prefix, verified, then read back row by row.

import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { migrateData } from "../../src/backup/migrate-data.ts";
import { PostgresSql } from "../../src/db/sql-postgres.ts";
import type { S3BlobBackend } from "../../src/files/blob-backend-s3.ts";
import { onPostgres } from "../helpers/backend.ts";
import { migrationFixture } from "../helpers/populated-datadir.ts";
import { dialects } from "../helpers/postgres.ts";

// Not in a PostgreSQL run (GENGATE_TEST_BACKEND=postgres): the source must be a SQLite data dir, and
// the normal run covers migrate-data, its PostgreSQL target included.
const hasPg = dialects().includes("postgres") && !onPostgres;

describe.skipIf(!hasPg)("migrate-data into PostgreSQL and S3", () => {
  const fixture = migrationFixture();

  test("every table and file copied, verified, and equal when read back", async () => {
    const { dataDir, db, target, options } = await fixture.setup();
    const lines: string[] = [];
    const report = await migrateData({
      ...options,
      progress: (l) => lines.push(l),
      batchRows: 3, // several batches per table, also for composite keys
    });
    expect(report.verified).toBe(true);
    expect(report.files_copied).toBe(true);
    expect(report.files).toBeGreaterThanOrEqual(6); // 3 uploads, 3 outputs
    expect(lines.some((l) => l.startsWith("rows: ledger_entries"))).toBe(true);

    const src = new Database(join(dataDir, "gengate.db"), { readonly: true, safeIntegers: true });
    const pg = PostgresSql.connect({ url: db.url, password: null });
    try {
      const counts = Object.fromEntries(report.tables.map((t) => [t.table, t.rows]));
      for (const table of [
        "accounts",
        "api_keys",
        "ledger_entries",
        "holds",
        "jobs",
        "job_outputs",
        "files",
        "people",
        "sessions",
        "memberships",
        "invites",
        "redeem_batches",
        "redeem_codes",
        "orders",
        "payment_notifications",
        "webhook_deliveries",
      ]) {
        const n = (src.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: bigint }).n;
        expect({ table, n: Number(n) }).toEqual({ table, n: counts[table]! });
        expect({ table, n: Number(n) > 0 }).toEqual({ table, n: true });
        const got = await pg.get<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`);
        expect({ table, n: got!.n }).toEqual({ table, n });
      }
      // Holds both open (jobs running when the server stopped) and resolved, and the kinds of entries.
      const holds = await pg.all<{ status: string; n: bigint }>(
        "SELECT status, count(*) AS n FROM holds GROUP BY status ORDER BY status",
      );
      expect(holds.map((h) => h.status)).toEqual(["open", "released", "settled"]);
      const kinds = await pg.all<{ kind: string }>("SELECT DISTINCT kind FROM ledger_entries ORDER BY kind");
      expect(kinds.map((k) => k.kind)).toEqual(
        ["adjustment", "charge", "hold", "release", "topup"].filter(
          (k) => (src.query("SELECT 1 FROM ledger_entries WHERE kind = ?").get(k) as unknown) !== null,
        ),
      );
      expect(kinds.length).toBeGreaterThanOrEqual(4);
      // Rows read back equal, value for value (ids, times, bytes).
      const srcAccount = src.query("SELECT * FROM accounts WHERE name = 'default'").get() as Record<
        string,
        unknown
      >;
      expect(await pg.get("SELECT * FROM accounts WHERE name = 'default'")).toEqual(srcAccount);
      const srcSession = src.query("SELECT * FROM sessions ORDER BY id LIMIT 1").get() as Record<
        string,
        unknown
      >;
      const pgSession = await pg.get<Record<string, unknown>>("SELECT * FROM sessions ORDER BY id LIMIT 1");
      expect({ ...pgSession, token_hash: Buffer.from(pgSession!.token_hash as Uint8Array) }).toEqual({
        ...srcSession,
        token_hash: Buffer.from(srcSession.token_hash as Uint8Array),
      });
      // The identity sequence is past the copied ids: a new entry gets the next id.
      const maxId = (src.query("SELECT max(id) AS m FROM ledger_entries").get() as { m: bigint }).m;
      const next = await pg.get<{ id: bigint }>(
        `INSERT INTO ledger_entries (account_id, kind, source, amount_micro, balance_delta_micro, held_delta_micro,
           balance_after_micro, held_after_micro, created_at)
         SELECT id, 'adjustment', 'ADMIN', 0, 0, 0, balance_micro, held_micro, 0 FROM accounts LIMIT 1 RETURNING id`,
      );
      expect(next!.id).toBe(maxId + 1n);
      // storage_usage equals the source's (the triggers' sums), not doubled.
      const usage = src.query("SELECT kind, bytes FROM storage_usage ORDER BY kind").all();
      expect(await pg.all("SELECT kind, bytes FROM storage_usage ORDER BY kind")).toEqual(usage);
      // Every stored file is in the bucket under its key, byte for byte.
      const paths = src
        .query("SELECT path FROM files WHERE deleted_at IS NULL UNION ALL SELECT path FROM job_outputs")
        .all() as { path: string }[];
      for (const { path } of paths) {
        const bytes = await target.read(path, 0, 10_000_000);
        expect(Buffer.from(bytes).equals(readFileSync(join(dataDir, "files", path)))).toBe(true);
      }
    } finally {
      src.close();
      await pg.close();
    }
  }, 120_000);

  test("--dry-run writes nothing and says what it would copy", async () => {
    const { db, target, options } = await fixture.setup();
    const report = await migrateData({ ...options, mode: "dry-run" });
    expect(report.verified).toBe(false);
    expect(report.rows).toBeGreaterThan(20);
    const pg = PostgresSql.connect({ url: db.url, password: null });
    try {
      expect(
        await pg.all("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"),
      ).toEqual([]);
    } finally {
      await pg.close();
    }
    const keys: string[] = [];
    for await (const o of target.list("")) keys.push(o.key);
    expect(keys).toEqual([]);
  }, 60_000);

  test("objects an interrupted run left under gengate's keys are kept (a re-run resumes)", async () => {
    const { dataDir, target, options } = await fixture.setup();
    const peek = new Database(join(dataDir, "gengate.db"), { readonly: true });
    const { path } = peek.query("SELECT path FROM files LIMIT 1").get() as { path: string };
    peek.close();
    await target.put(path, readFileSync(join(dataDir, "files", path)), "image/png");
    const report = await migrateData(options);
    expect(report.files_already_present).toBe(1);
    expect(report.verified).toBe(true);
  }, 60_000);

  test("a data dir whose files are in a bucket already: bucket to bucket, or left in place", async () => {
    const { dataDir, options } = await fixture.setup();
    const from = fixture.s3().store();
    const peek = new Database(join(dataDir, "gengate.db"), { readonly: true });
    const paths = peek
      .query("SELECT path FROM files WHERE deleted_at IS NULL UNION ALL SELECT path FROM job_outputs")
      .all() as { path: string }[];
    peek.close();
    for (const { path } of paths)
      await from.put(path, readFileSync(join(dataDir, "files", path)), "application/octet-stream");
    rmSync(join(dataDir, "files"), { recursive: true }); // nothing may be read from the data dir's files/
    const to = options.targetBlobs as S3BlobBackend;
    const moved = await migrateData({ ...options, sourceBlobs: from });
    expect(moved).toMatchObject({ verified: true, files_copied: true, files: paths.length });
    for (const { path } of paths)
      expect(
        Buffer.from(await to.read(path, 0, 10_000_000)).equals(
          Buffer.from(await from.read(path, 0, 10_000_000)),
        ),
      ).toBe(true);
    const db2 = await fixture.database();
    const kept = await migrateData({
      ...options,
      target: { url: db2.url, password: null },
      sourceBlobs: from,
      targetBlobs: from,
    });
    expect(kept).toMatchObject({ verified: true, files_copied: false, storage: from.location });
  }, 120_000);
});
