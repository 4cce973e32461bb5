import { describe, expect, test } from "bun:test";
import {
  currentSchemaVersion,
  databaseReady,
  migrate,
  openDatabase,
  SchemaTooNewError,
} from "../../src/db/database.ts";
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from "../../src/db/migrations.ts";
import { JobOutputStore } from "../../src/files/job-output-store.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { JobEvents } from "../../src/queue/events.ts";
import { JobStore } from "../../src/queue/job-store.ts";
import { databaseAtVersion, sqlOf } from "../helpers/sql.ts";

describe("migrations", () => {
  test("versions are consecutive from 1", () => {
    MIGRATIONS.forEach((m, i) => {
      expect(m.version).toBe(i + 1);
    });
  });

  test("a new database is migrated to the latest version and records each step", () => {
    const db = openDatabase(":memory:");
    expect(currentSchemaVersion(db)).toBe(0);
    expect(migrate(db)).toEqual(MIGRATIONS.map((m) => m.version));
    expect(currentSchemaVersion(db)).toBe(LATEST_SCHEMA_VERSION);
    const rows = db.query("SELECT version, name FROM schema_migrations ORDER BY version").all();
    expect(rows.length).toBe(MIGRATIONS.length);
    expect(databaseReady(db).ok).toBe(true);
  });

  test("migrating twice applies nothing the second time", () => {
    const db = openDatabase(":memory:");
    migrate(db);
    expect(migrate(db)).toEqual([]);
  });

  test("a database from a newer gengate is refused and left untouched", () => {
    const db = openDatabase(":memory:");
    migrate(db);
    db.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future', 0)").run(
      LATEST_SCHEMA_VERSION + 1,
    );
    expect(() => migrate(db)).toThrow(SchemaTooNewError);
    expect(currentSchemaVersion(db)).toBe(LATEST_SCHEMA_VERSION + 1);
    expect(databaseReady(db).ok).toBe(false);
  });

  test("balances can never go negative and holds never exceed the balance (CHECK constraints)", () => {
    const db = openDatabase(":memory:");
    migrate(db);
    db.query(
      "INSERT INTO accounts (id, name, currency, balance_micro, held_micro, created_at) VALUES ('a', 'a', 'USD', 10, 0, 0)",
    ).run();
    expect(() => db.query("UPDATE accounts SET balance_micro = -1 WHERE id = 'a'").run()).toThrow();
    expect(() => db.query("UPDATE accounts SET held_micro = 11 WHERE id = 'a'").run()).toThrow();
    expect(() => db.query("UPDATE accounts SET currency = 'EUR' WHERE id = 'a'").run()).toThrow();
  });

  test("007 and 008 on a database with history: sweeps, old hold ids, storage totals", async () => {
    const db = databaseAtVersion(6);
    db.exec(
      "INSERT INTO accounts (id, name, currency, balance_micro, held_micro, created_at) VALUES ('acct_a', 'a', 'USD', 1000, 10, 0)",
    );
    db.exec(`INSERT INTO holds (id, account_id, model_id, request_id, source, currency, amount_micro,
      quoted_usd_micro, status, created_at) VALUES ('hold_zzzzRandomOld00000', 'acct_a', 'm', 'j1', 'API', 'USD', 10, 10, 'open', 0)`);
    db.exec(`INSERT INTO jobs (id, seq, account_id, model_id, kind, source, provider, status, input, quote,
      hold_id, deadline_at, created_at) VALUES ('j1', 1, 'acct_a', 'm', 'image', 'API', 'sandbox', 'IN_QUEUE', '{}', '{}',
      'hold_zzzzRandomOld00000', 5, 0)`);

    db.exec(`INSERT INTO job_outputs (job_id, idx, path, content_type, size, sha256, created_at, expires_at)
      VALUES ('j1', 0, 'outputs/j1/0', 'image/png', 700, 'x', 0, 9), ('j1', 1, 'outputs/j1/1', 'image/png', 50, 'x', 0, 9)`);
    db.exec(`INSERT INTO files (id, account_id, content_type, size, sha256, path, created_at, expires_at, deleted_at)
      VALUES ('file_a', 'acct_a', 'image/png', 30, 'x', 'uploads/a', 0, 9, NULL),
             ('file_b', 'acct_a', 'image/png', 99, 'x', 'uploads/b', 0, 9, 5)`);

    expect(migrate(db)).toEqual(MIGRATIONS.filter((m) => m.version >= 7).map((m) => m.version));
    // 008 starts the usage totals from the rows already there (deleted uploads do not count).
    expect(db.query("SELECT kind, bytes FROM storage_usage ORDER BY kind").all()).toEqual([
      { kind: "outputs", bytes: 750n },
      { kind: "uploads", bytes: 30n },
    ]);
    // 030 deletes the rows of deleted uploads (a marked row was kept forever); the totals stay.
    expect(db.query("SELECT id FROM files").all()).toEqual([{ id: "file_a" }]);
    const indexes = (
      db.query("SELECT name FROM sqlite_master WHERE type = 'index'").all() as { name: string }[]
    ).map((r) => r.name);
    expect(indexes).toContain("jobs_open_deadline");
    expect(indexes).toContain("idempotency_created");
    expect(indexes).not.toContain("jobs_open_by_key");
    expect(indexes).not.toContain("holds_open_by_key");
    const ledger = new Ledger(sqlOf(db), { billingUrl: "http://x" });
    const jobs = new JobStore(sqlOf(db), {
      ledger,
      outputs: new JobOutputStore(sqlOf(db)),
      events: new JobEvents(),
    });
    expect((await jobs.pastDeadline(10)).map((j) => j.id)).toEqual(["j1"]);
    expect((await ledger.settle("hold_zzzzRandomOld00000", 4n)).changed).toBe(true);
    const after = await ledger.reserve({
      accountId: "acct_a",
      keyId: null,
      modelId: "m",
      requestId: "j2",
      source: "API",
      quotedUsdMicro: 1n,
    });
    expect((await ledger.getHold(after.id))!.status).toBe("open");
  });

  test("011 keeps every ledger entry and its id, allows TOPUP, and credits an order or code once", async () => {
    const db = databaseAtVersion(10);
    db.exec(
      "INSERT INTO accounts (id, name, currency, balance_micro, held_micro, created_at) VALUES ('acct_a', 'a', 'USD', 400, 0, 0)",
    );
    db.exec(`INSERT INTO ledger_entries (account_id, kind, source, amount_micro, balance_delta_micro, held_delta_micro,
      balance_after_micro, held_after_micro, reason, created_at) VALUES
      ('acct_a', 'topup', 'ADMIN', 500, 500, 0, 500, 0, 'before', 1),
      ('acct_a', 'adjustment', 'ADMIN', 100, -100, 0, 400, 0, 'fix', 2)`);
    const before = db.query("SELECT * FROM ledger_entries ORDER BY id").all() as Record<string, unknown>[];
    expect(() =>
      db.exec(`INSERT INTO ledger_entries (account_id, kind, source, amount_micro, balance_delta_micro, held_delta_micro,
        balance_after_micro, held_after_micro, created_at) VALUES ('acct_a', 'topup', 'TOPUP', 1, 1, 0, 401, 0, 0)`),
    ).toThrow();

    migrate(db);
    const after = db.query("SELECT * FROM ledger_entries ORDER BY id").all() as Record<string, unknown>[];
    expect(after.map(({ ref_id, ...rest }) => (expect(ref_id).toBeNull(), rest))).toEqual(before);
    const indexes = (
      db
        .query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ledger_entries'")
        .all() as {
        name: string;
      }[]
    ).map((r) => r.name);
    expect(indexes.sort()).toEqual([
      "ledger_entries_account",
      "ledger_entries_charges",
      "ledger_entries_credits",
      "ledger_entries_hold", // migration 021
      "ledger_entries_topup_ref",
    ]);

    const ledger = new Ledger(sqlOf(db), { billingUrl: "http://x" });
    expect((await ledger.topUp("acct_a", 250n, "paid", "TOPUP", "ord_1")).balance_micro).toBe(650n);
    // The same order credited again fails in the database, and the balance does not move.
    await expect(
      (async () => await ledger.topUp("acct_a", 250n, "paid", "TOPUP", "ord_1"))(),
    ).rejects.toThrow();
    await expect((async () => await ledger.topUp("acct_a", 250n, "no ref", "TOPUP", null))()).rejects.toThrow(
      RangeError,
    );
    // A refund may name the order again: it is an adjustment, not a top-up.
    expect((await ledger.adjust("acct_a", -250n, "refund", "ord_1")).balance_micro).toBe(400n);
    const balance = db.query("SELECT balance_micro FROM accounts WHERE id = 'acct_a'").get() as {
      balance_micro: bigint;
    };
    const sum = db.query("SELECT sum(balance_delta_micro) AS s FROM ledger_entries").get() as { s: bigint };
    expect(balance.balance_micro).toBe(400n);
    expect(sum.s).toBe(400n);
    // TOPUP labels money in only.
    expect(() =>
      db.exec(`INSERT INTO ledger_entries (account_id, kind, source, amount_micro, balance_delta_micro, held_delta_micro,
        balance_after_micro, held_after_micro, created_at, ref_id) VALUES ('acct_a', 'charge', 'TOPUP', 1, -1, 0, 399, 0, 0, 'x')`),
    ).toThrow();
  });

  test("WAL journal mode is on for file databases", () => {
    const path = `${require("node:os").tmpdir()}/gengate-wal-${process.pid}.db`;
    const db = openDatabase(path);
    const mode = db.query("PRAGMA journal_mode").get() as { journal_mode: string };
    expect(mode.journal_mode).toBe("wal");
    db.close();
  });

  test("temporary storage stays in memory (no temp file per savepoint transaction)", () => {
    const db = openDatabase(":memory:");
    // 2 = MEMORY. With the default, every transaction with a savepoint created a file in /var/tmp.
    expect((db.query("PRAGMA temp_store").get() as { temp_store: bigint }).temp_store).toBe(2n);
  });

  test("the WAL is checkpointed every 2000 pages, not SQLite's 1000 (hot pages written once per more commits)", () => {
    const db = openDatabase(":memory:");
    const row = db.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: bigint };
    expect(row.wal_autocheckpoint).toBe(2000n);
  });
});
