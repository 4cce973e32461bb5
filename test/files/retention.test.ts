import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SqlParam } from "../../src/db/sql.ts";
import { countRows } from "../helpers/backend.ts";
import { testQueueServices } from "../helpers/services.ts";

/** Expired and live uploads and outputs, rows and bytes, beyond one sweep batch (1000). */
async function seeded(o: { expiredOutputs: number; expiredUploads: number; live: number }) {
  const t = await testQueueServices();
  const now = Date.now();
  const outputs: SqlParam[][] = [];
  const uploads: SqlParam[][] = [];
  const write = (path: string) => {
    mkdirSync(join(t.ctx.files.root, path, ".."), { recursive: true });
    writeFileSync(join(t.ctx.files.root, path), "abc");
  };
  for (let i = 0; i < o.expiredOutputs; i++)
    outputs.push([`job-old-${i}`, `outputs/job-old-${i}/0`, now - 1]);
  for (let i = 0; i < o.expiredUploads; i++)
    uploads.push([`file_old${i}`, t.account.id, `uploads/old${i}`, now - 1]);
  for (let i = 0; i < o.live; i++) {
    outputs.push([`job-new-${i}`, `outputs/job-new-${i}/0`, now + 3_600_000]);
    uploads.push([`file_new${i}`, t.account.id, `uploads/new${i}`, now + 3_600_000]);
  }
  await t.ctx.sql.tx(async (tx) => {
    // Multi-row INSERTs of 500 rows: one round trip each on PostgreSQL.
    for (let i = 0; i < outputs.length; i += 500) {
      const rows = outputs.slice(i, i + 500);
      await tx.run(
        `INSERT INTO job_outputs (job_id, idx, path, content_type, size, sha256, created_at, expires_at) VALUES ${rows.map(() => "(?, 0, ?, 'image/png', 3, 'x', 0, ?)").join(", ")}`,
        rows.flat(),
      );
    }
    for (let i = 0; i < uploads.length; i += 500) {
      const rows = uploads.slice(i, i + 500);
      await tx.run(
        `INSERT INTO files (id, account_id, content_type, size, sha256, path, created_at, expires_at) VALUES ${rows.map(() => "(?, ?, 'image/png', 3, 'x', ?, 0, ?)").join(", ")}`,
        rows.flat(),
      );
    }
  });
  for (const p of [
    "outputs/job-old-0/0",
    "outputs/job-old-2499/0",
    "uploads/old0",
    "outputs/job-new-0/0",
    "uploads/new0",
  ])
    write(p);
  const count = (from: string) => countRows(t.ctx.sql, from);
  return { t, now, count, exists: (p: string) => existsSync(join(t.ctx.files.root, p)) };
}

describe("retention sweep", () => {
  test("removes every expired row and file, in batches with turns for requests in between", async () => {
    const s = await seeded({ expiredOutputs: 2_500, expiredUploads: 1_200, live: 5 });
    const order: string[] = [];
    let between: Promise<number> | null = null;
    setImmediate(() => {
      order.push("a turn for others");
      between = s.count("job_outputs");
    });
    const gone = await s.t.ctx.files.sweep(s.now);
    order.push("done");
    expect(gone).toEqual({ files: 1_200, outputs: 2_500 });
    expect(order).toEqual(["a turn for others", "done"]);
    // On SQLite the only turn is between batches (the statements themselves never yield), and the
    // count queued there runs before the next batch's transaction: it sees the first batch done.
    // On PostgreSQL every statement yields; the count sees whatever was committed by then.
    if (s.t.ctx.sql.dialect === "sqlite") expect(await between!).toBe(1505);
    expect(await s.count("job_outputs")).toBe(5);
    // The expired uploads' rows are gone, not marked (migration 030): the table holds the live ones.
    expect(await s.count("files")).toBe(5);
    for (const p of ["outputs/job-old-0/0", "outputs/job-old-2499/0", "uploads/old0"])
      expect(s.exists(p)).toBe(false);
    for (const p of ["outputs/job-new-0/0", "uploads/new0"]) expect(s.exists(p)).toBe(true);
    expect(await s.t.ctx.files.sweep(s.now)).toEqual({ files: 0, outputs: 0 });
  });
});
