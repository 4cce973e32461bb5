import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTestApp } from "../helpers/context.ts";

/** Expired and live uploads and outputs, rows and bytes, beyond one sweep batch (1000). */
async function seeded(o: { expiredOutputs: number; expiredUploads: number; live: number }) {
  const t = await makeTestApp();
  const now = Date.now();
  const out = t.db.prepare(
    "INSERT INTO job_outputs (job_id, idx, path, content_type, size, sha256, created_at, expires_at) VALUES (?, 0, ?, 'image/png', 3, 'x', 0, ?)",
  );
  const up = t.db.prepare(
    "INSERT INTO files (id, account_id, content_type, size, sha256, path, created_at, expires_at) VALUES (?, ?, 'image/png', 3, 'x', ?, 0, ?)",
  );
  const write = (path: string) => {
    mkdirSync(join(t.ctx.files.root, path, ".."), { recursive: true });
    writeFileSync(join(t.ctx.files.root, path), "abc");
  };
  t.db.transaction(() => {
    for (let i = 0; i < o.expiredOutputs; i++) out.run(`job-old-${i}`, `outputs/job-old-${i}/0`, now - 1);
    for (let i = 0; i < o.expiredUploads; i++)
      up.run(`file_old${i}`, t.account.id, `uploads/old${i}`, now - 1);
    for (let i = 0; i < o.live; i++) {
      out.run(`job-new-${i}`, `outputs/job-new-${i}/0`, now + 3_600_000);
      up.run(`file_new${i}`, t.account.id, `uploads/new${i}`, now + 3_600_000);
    }
  })();
  for (const p of [
    "outputs/job-old-0/0",
    "outputs/job-old-2499/0",
    "uploads/old0",
    "outputs/job-new-0/0",
    "uploads/new0",
  ])
    write(p);
  const count = (sql: string) => Number((t.db.query(sql).get() as { n: bigint }).n);
  return { t, now, count, exists: (p: string) => existsSync(join(t.ctx.files.root, p)) };
}

describe("retention sweep", () => {
  test("removes every expired row and file, in batches with turns for requests in between", async () => {
    const s = await seeded({ expiredOutputs: 2_500, expiredUploads: 1_200, live: 5 });
    const order: string[] = [];
    setImmediate(() =>
      order.push(`between batches: ${s.count("SELECT count(*) AS n FROM job_outputs")} outputs`),
    );
    const gone = await s.t.ctx.files.sweep(s.now);
    order.push("done");
    expect(gone).toEqual({ files: 1_200, outputs: 2_500 });
    expect(order).toEqual(["between batches: 1505 outputs", "done"]);
    expect(s.count("SELECT count(*) AS n FROM job_outputs")).toBe(5);
    expect(s.count("SELECT count(*) AS n FROM files WHERE deleted_at IS NULL")).toBe(5);
    for (const p of ["outputs/job-old-0/0", "outputs/job-old-2499/0", "uploads/old0"])
      expect(s.exists(p)).toBe(false);
    for (const p of ["outputs/job-new-0/0", "uploads/new0"]) expect(s.exists(p)).toBe(true);
    expect(await s.t.ctx.files.sweep(s.now)).toEqual({ files: 0, outputs: 0 });
  });
});
