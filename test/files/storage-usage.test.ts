import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { onPostgres } from "../helpers/backend.ts";
import { testQueueServices } from "../helpers/services.ts";

const SEED = Number(process.env.FC_SEED ?? 808);

describe("storage usage totals (triggers of migration 008)", () => {
  test("after any mix of uploads, outputs, deletions and sweeps they equal the sums over the rows", async () => {
    const op = fc.oneof(
      fc.record({ t: fc.constant("upload"), size: fc.integer({ min: 1, max: 1e9 }), expired: fc.boolean() }),
      fc.record({ t: fc.constant("output"), size: fc.integer({ min: 0, max: 1e9 }), expired: fc.boolean() }),
      fc.record({ t: fc.constant("delete-upload"), pick: fc.nat() }),
      fc.record({ t: fc.constant("sweep") }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
        const t = await testQueueServices();
        const now = Date.now();
        const ids: string[] = [];
        let n = 0;
        for (const o of ops) {
          n++;
          if (o.t === "upload") {
            const id = `file_u${n}`;
            await t.ctx.files.insert({
              id,
              account_id: t.account.id,
              key_id: null,
              content_type: "image/png",
              size: BigInt(o.size),
              sha256: "x",
              path: `uploads/u${n}`,
              width: null,
              height: null,
              created_at: BigInt(now),
              expires_at: BigInt(o.expired ? now - 1 : now + 3_600_000),
            });
            ids.push(id);
          } else if (o.t === "output") {
            await t.ctx.sql.run(
              "INSERT INTO job_outputs (job_id, idx, path, content_type, size, sha256, created_at, expires_at) VALUES (?, 0, ?, 'image/png', ?, 'x', 0, ?)",
              [`j${n}`, `outputs/j${n}/0`, o.size, o.expired ? now - 1 : now + 3_600_000],
            );
          } else if (o.t === "delete-upload" && ids.length > 0) {
            const row = await t.ctx.files.getById(ids[o.pick % ids.length]!, 0);
            if (row) await t.ctx.files.delete(row);
          } else if (o.t === "sweep") {
            await t.ctx.files.sweep(now);
          }
        }
        const sums = (await t.ctx.sql.get<{ files: bigint; outputs: bigint }>(
          `SELECT (SELECT coalesce(sum(size), 0) FROM files WHERE deleted_at IS NULL) AS files,
                  (SELECT coalesce(sum(size), 0) FROM job_outputs) AS outputs`,
        ))!;
        expect(await t.ctx.files.usageBytes()).toEqual({
          files: Number(sums.files),
          outputs: Number(sums.outputs),
        });
      }),
      // Each run is a new app: on PostgreSQL a new database (about 0.3 s), so fewer runs there.
      { seed: SEED, numRuns: onPostgres ? 20 : 60 },
    );
  });
});
