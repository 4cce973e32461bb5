import type { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { migrate, openDatabase } from "../../src/db/database.ts";
import { PG_LATEST_SCHEMA_VERSION } from "../../src/db/migrate-postgres.ts";
import { LATEST_SCHEMA_VERSION } from "../../src/db/migrations.ts";
import type { Sql } from "../../src/db/sql.ts";
import { dialects, openTestSql, type TestSql } from "../helpers/postgres.ts";

// The PostgreSQL schema (src/db/migrations-pg/) must stay equal to SQLite's after all of its
// migrations: a SQLite migration without its PostgreSQL twin fails here.

interface Schema {
  /** table -> "column" or "column NOT NULL", in column order */
  columns: Record<string, string[]>;
  /** explicitly created indexes: "table.name(columns) [unique] [partial]" */
  indexes: string[];
  /** primary keys and UNIQUE column constraints: "table(columns)" */
  uniques: string[];
  /** "table(columns) -> table(columns)" */
  foreignKeys: string[];
  triggers: string[];
  /** "table: n" CHECK constraints per table (the expressions are written alike, not compared) */
  checks: string[];
}

function sqliteSchema(db: Database): Schema {
  const all = <T>(q: string) => db.query(q).all() as T[];
  const tables = all<{ name: string }>(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
  ).map((t) => t.name);
  const s: Schema = { columns: {}, indexes: [], uniques: [], foreignKeys: [], triggers: [], checks: [] };
  for (const t of tables) {
    const ddl = (db.query("SELECT sql FROM sqlite_master WHERE name = ?").get(t) as { sql: string }).sql;
    const checks = ddl.replace(/--[^\n]*/g, "").match(/\bCHECK\s*\(/gi)?.length ?? 0;
    if (checks) s.checks.push(`${t}: ${checks}`);
    const cols = all<{ name: string; notnull: bigint; pk: bigint }>(`PRAGMA table_info(${t})`);
    // A primary key column is NOT NULL (SQLite's INTEGER PRIMARY KEY reports 0: it is the rowid).
    s.columns[t] = cols.map((c) => (c.notnull || c.pk ? `${c.name} NOT NULL` : c.name));
    const pk = cols.filter((c) => c.pk).sort((a, b) => Number(a.pk - b.pk));
    if (pk.length) s.uniques.push(`${t}(${pk.map((c) => c.name).join(",")})`);
    for (const ix of all<{ name: string; unique: bigint; origin: string; partial: bigint }>(
      `PRAGMA index_list(${t})`,
    )) {
      const cols = all<{ name: string }>(`PRAGMA index_info(${ix.name})`).map((c) => c.name);
      if (ix.origin === "u") s.uniques.push(`${t}(${cols.join(",")})`);
      else if (ix.origin === "c")
        s.indexes.push(
          `${t}.${ix.name}(${cols.join(",")})${ix.unique ? " unique" : ""}${ix.partial ? " partial" : ""}`,
        );
    }
    for (const fk of all<{ table: string; from: string; to: string }>(`PRAGMA foreign_key_list(${t})`))
      s.foreignKeys.push(`${t}(${fk.from}) -> ${fk.table}(${fk.to})`);
  }
  s.triggers = all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'trigger'").map(
    (r) => r.name,
  );
  return sorted(s);
}

async function postgresSchema(sql: Sql): Promise<Schema> {
  const s: Schema = { columns: {}, indexes: [], uniques: [], foreignKeys: [], triggers: [], checks: [] };
  for (const c of await sql.all<{ t: string; c: string; nullable: string }>(
    `SELECT table_name AS t, column_name AS c, is_nullable AS nullable FROM information_schema.columns
     WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
  )) {
    s.columns[c.t] ??= [];
    s.columns[c.t]!.push(c.nullable === "NO" ? `${c.c} NOT NULL` : c.c);
  }
  const colsOf = `(SELECT string_agg(a.attname, ',' ORDER BY u.i) FROM unnest(%) WITH ORDINALITY u(n, i)
      JOIN pg_attribute a ON a.attrelid = %rel AND a.attnum = u.n)`;
  for (const ix of await sql.all<{ t: string; name: string; cols: string; uniq: bigint; partial: bigint }>(
    `SELECT c.relname AS t, i.relname AS name, ${colsOf.replace("%", "x.indkey::int2[]").replace("%rel", "x.indrelid")} AS cols,
            x.indisunique AS uniq, x.indpred IS NOT NULL AS partial
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid)`,
  ))
    s.indexes.push(
      `${ix.t}.${ix.name}(${ix.cols})${ix.uniq ? " unique" : ""}${ix.partial ? " partial" : ""}`,
    );
  for (const k of await sql.all<{
    t: string;
    cols: string;
    type: string;
    ft: string | null;
    fcols: string | null;
  }>(
    `SELECT c.relname AS t, ${colsOf.replace("%", "k.conkey").replace("%rel", "k.conrelid")} AS cols, k.contype::text AS type,
            f.relname AS ft, ${colsOf.replace("%", "k.confkey").replace("%rel", "k.confrelid")} AS fcols
     FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid LEFT JOIN pg_class f ON f.oid = k.confrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND k.contype IN ('p', 'u', 'f')`,
  )) {
    if (k.type === "f") s.foreignKeys.push(`${k.t}(${k.cols}) -> ${k.ft}(${k.fcols})`);
    else s.uniques.push(`${k.t}(${k.cols})`);
  }
  for (const c of await sql.all<{ t: string; n: bigint }>(
    `SELECT c.relname AS t, count(*) AS n FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
     JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE ns.nspname = 'public' AND k.contype = 'c'
     GROUP BY c.relname`,
  ))
    s.checks.push(`${c.t}: ${c.n}`);
  s.triggers = (
    await sql.all<{ name: string }>(
      `SELECT t.tgname AS name FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND NOT t.tgisinternal`,
    )
  ).map((r) => r.name);
  return sorted(s);
}

function sorted(s: Schema): Schema {
  return {
    columns: Object.fromEntries(Object.entries(s.columns).sort(([a], [b]) => a.localeCompare(b))),
    indexes: s.indexes.sort(),
    uniques: s.uniques.sort(),
    foreignKeys: s.foreignKeys.sort(),
    triggers: s.triggers.sort(),
    checks: s.checks.sort(),
  };
}

test("both dialects' migrations end at the same schema version", () => {
  expect(PG_LATEST_SCHEMA_VERSION).toBe(LATEST_SCHEMA_VERSION);
});

describe.each(dialects().filter((d) => d === "postgres"))("schema parity with %s", (dialect) => {
  let t: TestSql;
  let lite: Database;
  beforeAll(async () => {
    t = await openTestSql(dialect, { migrated: true });
    lite = openDatabase(":memory:");
    migrate(lite);
  });
  afterAll(async () => {
    lite?.close();
    await t?.close();
  });

  test("tables, columns (order, NOT NULL), indexes, unique keys, foreign keys, triggers and CHECK counts are equal", async () => {
    const pg = await postgresSchema(t.sql);
    const sqlite = sqliteSchema(lite);
    expect(Object.keys(pg.columns)).toEqual(Object.keys(sqlite.columns));
    for (const table of Object.keys(sqlite.columns))
      expect([table, pg.columns[table]]).toEqual([table, sqlite.columns[table]]);
    expect(pg.indexes).toEqual(sqlite.indexes);
    expect(pg.uniques).toEqual(sqlite.uniques);
    expect(pg.foreignKeys).toEqual(sqlite.foreignKeys);
    expect(pg.triggers).toEqual(sqlite.triggers);
    expect(pg.checks).toEqual(sqlite.checks);
    expect(sqlite.indexes.length).toBeGreaterThan(30);
  });
});
