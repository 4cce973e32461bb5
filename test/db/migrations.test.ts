import { describe, expect, test } from "bun:test";
import {
  currentSchemaVersion,
  databaseReady,
  migrate,
  openDatabase,
  SchemaTooNewError,
} from "../../src/db/database.ts";
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from "../../src/db/migrations.ts";

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

  test("the WAL is checkpointed every 500 pages, not SQLite's 1000 (shorter stalls)", () => {
    const db = openDatabase(":memory:");
    const row = db.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: bigint };
    expect(row.wal_autocheckpoint).toBe(500n);
  });
});
