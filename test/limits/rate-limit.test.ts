import { afterAll, describe, expect, test } from "bun:test";
import type { ConfigFile } from "../../src/config/schema.ts";
import { DomainError } from "../../src/lib/errors.ts";
import {
  SqlWriteRateLimiter,
  type WriteRateLimit,
  WriteRateLimiter,
  writeRateLimiter,
} from "../../src/limits/rate-limit.ts";
import { openAppInstances } from "../helpers/app-instances.ts";
import { openInstances } from "../helpers/instances.ts";
import { dialects, openTestSql } from "../helpers/postgres.ts";

/**
 * The write-rate limit: the same answers in memory (SQLite, one instance) and in the database
 * (PostgreSQL, shared by every instance); on PostgreSQL two instances count one client's writes
 * together.
 */

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers.splice(0)) await close();
});

async function refused(p: () => unknown): Promise<DomainError> {
  try {
    await p();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error("the write was not refused");
}

type Make = (now: () => number) => Promise<WriteRateLimit>;
const makers: [string, Make][] = [["memory", async (now) => new WriteRateLimiter(now)]];
for (const dialect of dialects()) {
  makers.push([
    `database (${dialect})`,
    async (now) => {
      const t = await openTestSql(dialect, { migrated: true });
      closers.push(async () => await t.close());
      return new SqlWriteRateLimiter(t.sql, now);
    },
  ]);
}

describe.each(makers)("write-rate limiter: %s", (_name, make) => {
  test("counts writes per key in one-minute windows from the key's first write", async () => {
    let now = 1_700_000_000_000;
    const limiter = await make(() => now);
    const r1 = await limiter.hit("k1", 3);
    expect(r1).toEqual({ policy: "writes", limit: 3, windowSeconds: 60, remaining: 2, resetSeconds: 60 });
    now += 20_500;
    expect((await limiter.hit("k1", 3)).remaining).toBe(1);
    expect((await limiter.hit("k1", 3)).remaining).toBe(0);
    const over = await refused(() => limiter.hit("k1", 3));
    expect(over.code).toBe("rate_limited");
    expect(over.retryAfterSeconds).toBe(40);
    expect(over.rateLimit).toEqual({
      policy: "writes",
      limit: 3,
      windowSeconds: 60,
      remaining: 0,
      resetSeconds: 40,
    });
    // A refused write does not count: still refused, then the window ends and counting restarts.
    await refused(() => limiter.hit("k1", 3));
    // Another key has its own window.
    expect((await limiter.hit("k2", 3)).remaining).toBe(2);
    now += 39_499; // 59.999 s after the first write: still the same window
    await refused(() => limiter.hit("k1", 3));
    now += 1;
    const fresh = await limiter.hit("k1", 3);
    expect(fresh.remaining).toBe(2);
    expect(fresh.resetSeconds).toBe(60);
  });

  test("a raised limit applies at once within the window (refused writes count once, at most)", async () => {
    const now = 1_700_000_000_000;
    const limiter = await make(() => now);
    for (let i = 0; i < 2; i++) await limiter.hit("k", 2);
    await refused(() => limiter.hit("k", 2));
    await refused(() => limiter.hit("k", 2));
    expect((await limiter.hit("k", 5)).remaining).toBe(1);
  });
});

test("on SQLite the server keeps the in-memory limiter; on PostgreSQL the shared one", async () => {
  const t = await openTestSql("sqlite");
  closers.push(async () => await t.close());
  expect(writeRateLimiter(t.sql)).toBeInstanceOf(WriteRateLimiter);
  if (dialects().includes("postgres")) {
    const pg = await openTestSql("postgres");
    closers.push(async () => await pg.close());
    expect(writeRateLimiter(pg.sql)).toBeInstanceOf(SqlWriteRateLimiter);
  }
});

describe.each(dialects().filter((d) => d === "postgres"))(
  "write-rate limit across instances (%s)",
  (dialect) => {
    test("concurrent writes on two instances are counted together: exactly the limit passes", async () => {
      const inst = await openInstances(dialect, 2);
      closers.push(() => inst.close());
      const limiters = inst.list.map((i) => new SqlWriteRateLimiter(i.sql));
      const limit = 40;
      const outcomes = await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          try {
            await limiters[i % 2]!.hit("key-1", limit);
            return "ok";
          } catch (err) {
            expect((err as DomainError).code).toBe("rate_limited");
            return "refused";
          }
        }),
      );
      expect(outcomes.filter((o) => o === "ok").length).toBe(limit);
    });

    test("a client spraying writes over two servers gets the answers of one", async () => {
      const config = {
        models: [],
        catalog: { sandbox: true },
        limits: { writes_per_minute: 4 },
      } as unknown as ConfigFile;
      const apps = await openAppInstances(dialect, config);
      closers.push(() => apps.close());
      const a = apps.first;
      const b = await apps.add();
      await a.ctx.ledger.topUp(apps.accountId, 100_000_000n, null);
      const answers: { status: number; remaining: string | null; retryAfter: string | null }[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await (i % 2 ? b : a).request("/v1/queue/sandbox/image", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ prompt: `p${i}` }),
        });
        answers.push({
          status: res.status,
          remaining: res.headers.get("ratelimit"),
          retryAfter: res.headers.get("retry-after"),
        });
      }
      expect(answers.map((x) => x.status)).toEqual([202, 202, 202, 202, 429, 429]);
      expect(answers.slice(0, 4).map((x) => /r=(\d+)/.exec(x.remaining ?? "")?.[1])).toEqual([
        "3",
        "2",
        "1",
        "0",
      ]);
      expect(Number(answers[5]!.retryAfter)).toBeGreaterThan(0);
    });
  },
);
