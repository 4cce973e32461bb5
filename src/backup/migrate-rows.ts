import type { Sql, SqlParam } from "../db/sql.ts";
import type { PostgresSql } from "../db/sql-postgres.ts";
import { MigrateFailed } from "./migrate-errors.ts";

/**
 * A table's rows for `gengate migrate-data` (src/backup/migrate-data.ts): read in primary-key order
 * over the `Sql` port (either dialect), copied into PostgreSQL in batches, and digested (row count and
 * SHA-256) so that both sides can be compared.
 */

/** A source table as the copy sees it (src/backup/migrate-tables.ts lists them). */
export interface Table {
  name: string;
  columns: string[];
  pk: string[];
  deps: string[];
  /** The digest of the rows a fresh schema's migrations put in it (storage_usage's zeros), else null. */
  seed: string | null;
}

export const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

export async function count(sql: Sql, table: string): Promise<number> {
  const row = await sql.get<{ n: bigint }>(`SELECT count(*) AS n FROM ${q(table)}`);
  return Number(row?.n ?? 0n);
}

/** Every table's rows in one PostgreSQL transaction, then the identity sequences past the copied ids. */
export async function copyRows(
  src: Sql,
  pg: PostgresSql,
  tables: Table[],
  batchRows: number,
  say: (line: string) => void,
): Promise<void> {
  await pg.tx(async (tx) => {
    for (const t of tables) {
      if (t.seed) await tx.run(`DELETE FROM ${q(t.name)}`);
      const per = Math.max(1, Math.min(batchRows, Math.floor(30_000 / t.columns.length)));
      const cols = t.columns.map(q).join(", ");
      const row = `(${t.columns.map(() => "?").join(", ")})`;
      let n = 0;
      let last = performance.now();
      for await (const page of batches(src, t, per)) {
        for (const batch of bySize(page, t.columns)) {
          const params: SqlParam[] = [];
          for (const r of batch) for (const c of t.columns) params.push(r[c] as SqlParam);
          try {
            await tx.run(
              `INSERT INTO ${q(t.name)} (${cols}) VALUES ${Array.from({ length: batch.length }, () => row).join(", ")}`,
              params,
            );
          } catch (err) {
            throw new MigrateFailed(
              `table ${t.name}: PostgreSQL refused rows ${n + 1}-${n + batch.length} (${(err as Error).message}); nothing was committed`,
            );
          }
          n += batch.length;
        }
        if (performance.now() - last > 1000) {
          last = performance.now();
          say(`rows: ${t.name} ${n}`);
        }
      }
      say(`rows: ${t.name} ${n} copied`);
    }
    const identities = await tx.all<{ t: string; c: string }>(
      "SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = current_schema() AND is_identity = 'YES'",
    );
    for (const { t, c } of identities) {
      await tx.get(
        `SELECT setval(pg_get_serial_sequence(?, ?), m) AS v FROM (SELECT max(${q(c)}) AS m FROM ${q(t)}) x WHERE m IS NOT NULL`,
        [q(t), c],
      );
    }
  });
}

/** Bytes of text and blobs per INSERT, at most (a page of large job inputs is split into several). */
const INSERT_BYTES = 4 * 1024 * 1024;

/** A page of rows cut into runs of at most INSERT_BYTES of text and blobs (at least one row each). */
export function* bySize(
  rows: Record<string, unknown>[],
  columns: string[],
): Generator<Record<string, unknown>[]> {
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < rows.length; i++) {
    let size = 0;
    for (const c of columns) {
      const v = rows[i]![c];
      if (typeof v === "string") size += v.length;
      else if (v instanceof Uint8Array) size += v.byteLength;
    }
    if (i > start && bytes + size > INSERT_BYTES) {
      yield rows.slice(start, i);
      start = i;
      bytes = 0;
    }
    bytes += size;
  }
  if (start < rows.length) yield rows.slice(start);
}

/**
 * A table's rows in batches, in primary-key order (keyset pages; the same statement in both
 * dialects, whose orders agree: TEXT is COLLATE "C" in PostgreSQL, bytes as in SQLite). A table
 * without a primary key is read in the order of all its columns, by offset.
 */
async function* batches(sql: Sql, t: Table, size: number): AsyncGenerator<Record<string, unknown>[]> {
  const cols = t.columns.map(q).join(", ");
  if (t.pk.length === 0) {
    const order = t.columns.map(q).join(", ");
    for (let offset = 0; ; offset += size) {
      const rows = await sql.all<Record<string, unknown>>(
        `SELECT ${cols} FROM ${q(t.name)} ORDER BY ${order} LIMIT ${size} OFFSET ${offset}`,
      );
      if (rows.length) yield rows;
      if (rows.length < size) return;
    }
  }
  const key = t.pk.length === 1 ? q(t.pk[0]!) : `(${t.pk.map(q).join(", ")})`;
  const marks = t.pk.length === 1 ? "?" : `(${t.pk.map(() => "?").join(", ")})`;
  const order = t.pk.map(q).join(", ");
  let after: SqlParam[] | null = null;
  for (;;) {
    const rows: Record<string, unknown>[] = await sql.all<Record<string, unknown>>(
      `SELECT ${cols} FROM ${q(t.name)}${after ? ` WHERE ${key} > ${marks}` : ""} ORDER BY ${order} LIMIT ${size}`,
      after ?? [],
    );
    if (rows.length) yield rows;
    if (rows.length < size) return;
    const lastRow = rows[rows.length - 1]!;
    after = t.pk.map((c) => lastRow[c] as SqlParam);
  }
}

/** One canonical text per value, the same whichever dialect read it (the port's types). */
function encode(v: unknown): string {
  if (v === null || v === undefined) return "n";
  if (typeof v === "bigint") return `i${v}`;
  if (typeof v === "string") return `s${v.length}:${v}`;
  if (v instanceof Uint8Array) return `b${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("hex")}`;
  return `f${String(v)}`;
}

/** A table's row count and the SHA-256 of all its rows in key order. */
export async function tableDigest(sql: Sql, t: Table): Promise<{ rows: number; sha256: string }> {
  const hash = new Bun.CryptoHasher("sha256");
  let rows = 0;
  for await (const batch of batches(sql, t, 2000)) {
    for (const r of batch) {
      let line = "";
      for (const c of t.columns) line += `${encode(r[c])}|`;
      hash.update(`${line}\n`);
    }
    rows += batch.length;
  }
  return { rows, sha256: hash.digest("hex") };
}
