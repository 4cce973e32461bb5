import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { fileImageSize } from "../../src/files/references.ts";
import { sniffImageSize } from "../../src/lib/image-size.ts";
import { pollUntil } from "../helpers/api.ts";
import { readBlob } from "../helpers/blobs.ts";
import { json, makeTestApp, testWorkerPool } from "../helpers/context.ts";
import { checkInvariants } from "../ledger/ledger-helpers.ts";
import { png } from "../providers/media-fixtures.ts";

/**
 * Seeded: random sandbox requests with random deliveries (`actual_units`, uploaded or declared
 * upscale sources, scales, tiers) run through the real submit, worker and settlement. Each job is
 * charged exactly the price of what its files are (an independent oracle: counts, the PNG's pixels,
 * the delivered seconds), never above its hold; nothing delivered fails and charges nothing; and the
 * ledger reconciles throughout. FC_SEED reproduces a run, FC_RUNS runs more.
 */
const SEED = Number(process.env.FC_SEED ?? 20261123);
const RUNS = Number(process.env.FC_RUNS ?? 30);
const TOP_UP = 1_000_000_000n;

const t = await makeTestApp();
await t.ctx.ledger.topUp(t.account.id, TOP_UP, null);
const pool = testWorkerPool(t.ctx, {
  concurrency: () => 2,
  uploadedImageSize: async (id, account) => fileImageSize(await t.ctx.files.getLive(id, account)),
});
afterAll(() => pool.stop(1000));

const actual = fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined });
const TIER_PRICE: Record<string, bigint> = { "480p": 20_000n, "720p": 40_000n, "1080p": 80_000n };
type Case =
  | { model: "sandbox/image"; n: number; w: number; h: number; actual?: number }
  | { model: "sandbox/upscale"; w: number; h: number; scale: number; upload: boolean; actual?: number }
  | { model: "sandbox/video"; d: number; tier: string; actual?: number }
  | { model: "sandbox/avatar" | "sandbox/speech"; d: number; actual?: number };

const cases: fc.Arbitrary<Case> = fc.oneof(
  fc.record({
    model: fc.constant("sandbox/image" as const),
    n: fc.integer({ min: 1, max: 4 }),
    w: fc.integer({ min: 64, max: 160 }),
    h: fc.integer({ min: 64, max: 160 }),
    actual,
  }),
  fc.record({
    model: fc.constant("sandbox/upscale" as const),
    w: fc.integer({ min: 64, max: 400 }),
    h: fc.integer({ min: 64, max: 400 }),
    scale: fc.integer({ min: 2, max: 4 }),
    upload: fc.boolean(),
    actual: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
  }),
  fc.record({
    model: fc.constant("sandbox/video" as const),
    d: fc.integer({ min: 1, max: 4 }),
    tier: fc.constantFrom("480p", "720p", "1080p"),
    actual,
  }),
  fc.record({
    model: fc.constantFrom("sandbox/avatar" as const, "sandbox/speech" as const),
    d: fc.integer({ min: 1, max: 6 }),
    actual,
  }),
);

const post = async (path: string, body: string | Uint8Array, type: string) =>
  json<Record<string, unknown>>(
    await t.request(path, { method: "POST", headers: { "content-type": type }, body }),
  );

/** The expected charge from the delivered files, computed independently of the settlement code. */
function expectedCharge(c: Case, files: Uint8Array[]): bigint {
  const cap = c.actual ?? Number.POSITIVE_INFINITY;
  switch (c.model) {
    case "sandbox/image":
      expect(files.length).toBe(Math.min(c.n, cap));
      return 10_000n * BigInt(files.length);
    case "sandbox/upscale": {
      const size = sniffImageSize(files[0]!)!;
      const pixels = size.width * size.height;
      const full = c.w * c.scale * (c.h * c.scale);
      if (full <= cap * 1_000_000) expect(pixels).toBe(full);
      else expect(pixels).toBeLessThanOrEqual(cap * 1_000_000);
      return (BigInt(pixels) * 2000n + 999_999n) / 1_000_000n;
    }
    case "sandbox/video":
      return TIER_PRICE[c.tier]! * BigInt(Math.min(c.d, cap));
    case "sandbox/avatar":
      return 30_000n * BigInt(Math.min(c.d, cap));
    case "sandbox/speech":
      return 5_000n * BigInt(Math.min(c.d, cap));
  }
}

async function submit(c: Case): Promise<string> {
  const sandbox = c.actual === undefined ? {} : { sandbox: { actual_units: c.actual } };
  let input: Record<string, unknown>;
  switch (c.model) {
    case "sandbox/image":
      input = { prompt: "p", num_images: c.n, width: c.w, height: c.h };
      break;
    case "sandbox/upscale": {
      if (c.upload) {
        const f = await post("/v1/files", png(c.w, c.h), "image/png");
        // Declared sizes are deliberately wrong: the measured upload must win.
        input = { image_url: f.file_id, width: 64, height: 64, scale: c.scale };
      } else input = { image_url: "https://example.com/x.png", width: c.w, height: c.h, scale: c.scale };
      break;
    }
    case "sandbox/video":
      input = { prompt: "p", duration: c.d, resolution: c.tier };
      break;
    case "sandbox/avatar":
      input = { image_url: "https://example.com/face.png", duration: c.d };
      break;
    case "sandbox/speech":
      input = { text: "hello", duration: c.d };
      break;
  }
  const q = await post(`/v1/queue/${c.model}`, JSON.stringify({ ...input, ...sandbox }), "application/json");
  if (!q.request_id) throw new Error(`submit refused: ${JSON.stringify(q)}`);
  return q.request_id as string;
}

describe("sandbox deliveries (seeded)", () => {
  test("charge == price of the delivered files <= hold; nothing delivered charges nothing; the ledger reconciles", async () => {
    let charged = 0n;
    await fc.assert(
      fc.asyncProperty(cases, async (c) => {
        const id = await submit(c);
        const job = await pollUntil(
          async () => (await t.ctx.jobs.get(id))!,
          (j) => j.status === "COMPLETED" || j.status === "FAILED",
          30_000,
        );
        const hold = (await t.ctx.ledger.getHold(job.hold_id))!;
        if (c.actual === 0) {
          expect(job.status).toBe("FAILED");
          expect(hold.status).toBe("released");
        } else {
          expect(job.status).toBe("COMPLETED");
          const paths = await t.ctx.sql.all<{ path: string }>(
            "SELECT path FROM job_outputs WHERE job_id = ? ORDER BY idx",
            [id],
          );
          const files = await Promise.all(paths.map((r) => readBlob(t.ctx.blobs, r.path)));
          const expected = expectedCharge(c, files);
          expect(hold.status).toBe("settled");
          expect(hold.charged_usd_micro).toBe(expected);
          expect(expected).toBeLessThanOrEqual(hold.amount_micro);
          if (c.actual === undefined) expect(expected).toBe(hold.amount_micro); // full delivery = the quote
          charged += expected;
        }
        expect(await checkInvariants(t.ctx.sql)).toEqual([]);
      }),
      { seed: SEED, numRuns: RUNS, verbose: 1 },
    );
    const account = (await t.ctx.accounts.getAccount(t.account.id))!;
    expect(account.held_micro).toBe(0n);
    expect(account.balance_micro).toBe(TOP_UP - charged);
  }, 240_000);
});
