import { migrate, openDatabase } from "../db/database.ts";
import { PG_LATEST_SCHEMA_VERSION, postgresSchemaVersion } from "../db/migrate-postgres.ts";
import type { Sql } from "../db/sql.ts";
import type { PostgresSql } from "../db/sql-postgres.ts";
import { SqliteSql } from "../db/sql-sqlite.ts";
import { MigrateRefused } from "./migrate-errors.ts";
import { count, q, type Table, tableDigest } from "./migrate-rows.ts";

/**
 * Which tables `gengate migrate-data` (src/backup/migrate-data.ts) copies, in which order, and the
 * checks of the target database's schema: the same columns, and nothing in it yet.
 */

/** Recorded by each side's own migrations, compared as a version, never copied. */
const SKIPPED = new Set(["schema_migrations"]);

/** The source's tables (but schema_migrations) in foreign-key order, seeded tables last. */
export async function sourceTables(sql: Sql): Promise<Table[]> {
  const names = await sql.all<{ name: string }>(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
  );
  const byName = new Map<string, Table>();
  for (const { name } of names) {
    if (SKIPPED.has(name)) continue;
    const cols = await sql.all<{ name: string; pk: bigint }>(
      "SELECT name, pk FROM pragma_table_info(?) ORDER BY cid",
      [name],
    );
    const fks = await sql.all<{ table: string }>('SELECT "table" FROM pragma_foreign_key_list(?)', [name]);
    byName.set(name, {
      name,
      columns: cols.map((c) => c.name),
      pk: cols
        .filter((c) => c.pk > 0n)
        .sort((a, b) => Number(a.pk - b.pk))
        .map((c) => c.name),
      deps: [...new Set(fks.map((f) => f.table))].filter((t) => t !== name),
      seed: null,
    });
  }
  // The rows a fresh schema holds, from the same migrations in memory: such a table in the target
  // is still "empty" when it holds just these; the copy replaces them with the source's.
  const fresh = openDatabase(":memory:");
  const freshSql = new SqliteSql(fresh);
  try {
    migrate(fresh);
    for (const t of byName.values())
      if ((await count(freshSql, t.name)) > 0) t.seed = (await tableDigest(freshSql, t)).sha256;
  } finally {
    freshSql.close();
    fresh.close();
  }
  // A seeded table nothing references (storage_usage, kept by triggers on files and outputs) is copied
  // last, over what the triggers summed while the other tables were copied.
  const referenced = new Set([...byName.values()].flatMap((t) => t.deps));
  const last = (t: Table) => t.seed !== null && !referenced.has(t.name);
  const ordered: Table[] = [];
  const done = new Set<string>();
  const visit = (t: Table, path: string[]) => {
    if (done.has(t.name)) return;
    if (path.includes(t.name))
      throw new Error(`foreign keys form a cycle: ${[...path, t.name].join(" -> ")}`);
    for (const d of t.deps) {
      const dep = byName.get(d);
      if (dep) visit(dep, [...path, t.name]);
    }
    done.add(t.name);
    ordered.push(t);
  };
  for (const t of byName.values()) if (!last(t)) visit(t, []);
  for (const t of byName.values()) if (last(t)) visit(t, []);
  return ordered;
}

/** The target's tables must have the source's columns, in the same order. */
export async function checkColumns(pg: Sql, tables: Table[]): Promise<void> {
  for (const t of tables) {
    const cols = await pg.all<{ c: string }>(
      "SELECT column_name AS c FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position",
      [t.name],
    );
    const got = cols.map((c) => c.c).join(",");
    if (got !== t.columns.join(","))
      throw new MigrateRefused(
        `table ${t.name} differs between the data dir (${t.columns.join(", ")}) and the target (${got || "absent"})`,
      );
  }
}

/** Refuses a database that holds anything but an empty gengate schema (of a version this binary knows). */
export async function checkTargetEmpty(pg: PostgresSql, tables: Table[]): Promise<void> {
  const present = (
    await pg.all<{ t: string }>(
      "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
    )
  ).map((r) => r.t);
  if (present.length === 0) return;
  const known = new Set([...tables.map((t) => t.name), ...SKIPPED]);
  const foreign = present.filter((t) => !known.has(t));
  if (!present.includes("schema_migrations") || foreign.length)
    throw new MigrateRefused(
      `the target database is not empty: it holds tables that are not gengate's (${(foreign.length ? foreign : present).slice(0, 5).join(", ")}); give an empty database`,
    );
  const v = await postgresSchemaVersion(pg);
  if (v > PG_LATEST_SCHEMA_VERSION)
    throw new MigrateRefused(
      `the target database's schema version ${v} is newer than this gengate knows (${PG_LATEST_SCHEMA_VERSION})`,
    );
  for (const t of tables) {
    if (!present.includes(t.name)) continue;
    const filled = t.seed
      ? (await tableDigest(pg, t)).sha256 !== t.seed
      : (await pg.get(`SELECT 1 AS x FROM ${q(t.name)} LIMIT 1`)) !== null;
    if (filled)
      throw new MigrateRefused(
        `the target database is not empty: table ${t.name} has rows (a finished copy? check it with --verify-only; else give an empty database)`,
      );
  }
}
