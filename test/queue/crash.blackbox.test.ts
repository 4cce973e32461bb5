import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { creditDefaultAccount, pollUntil } from "../helpers/api.ts";
import { openServerSql, startServer, type TestServer, tempDir } from "../helpers/server.ts";
import { checkInvariants } from "../ledger/ledger-helpers.ts";

const JOBS = Number(process.env.CRASH_JOBS ?? 300);
const servers: TestServer[] = [];
afterAll(() => {
  for (const s of servers) s.cleanup();
});

describe("crash recovery (kill -9 mid-flight)", () => {
  test(`${JOBS} delayed jobs survive a kill -9: all end final, every hold resolved once, balances match`, async () => {
    const dir = tempDir();
    const dataDir = join(dir, "data");
    const config = join(dir, "gengate.toml");
    writeFileSync(
      config,
      "[queue]\nconcurrency = { sandbox = 16 }\n[limits]\nin_flight = 100000\nwrites_per_minute = 100000\n",
    );
    const args = ["--config", config];
    const first = await startServer({ dataDir, args });
    servers.push(first);
    const key = first.defaultKey!;
    const accountId = await creditDefaultAccount(first, "1000");

    const ids: string[] = [];
    for (let i = 0; i < JOBS; i += 25) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(25, JOBS - i) }, (_, j) =>
          first.fetch("/v1/queue/sandbox/image", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              prompt: `job ${i + j}`,
              width: 64,
              height: 64,
              sandbox: {
                delay_ms: 50 + (((i + j) * 37) % 400),
                ...((i + j) % 10 === 0 ? { fail: true } : {}),
              },
            }),
          }),
        ),
      );
      for (const r of batch) {
        expect(r.status).toBe(202);
        ids.push(((await r.json()) as { request_id: string }).request_id);
      }
    }
    await Bun.sleep(300);
    first.proc.kill("SIGKILL");
    await first.proc.exited;

    // Some jobs were mid-flight: open holds and IN_PROGRESS rows with a dead worker's lease.
    const mid = await openServerSql(dataDir);
    const inFlight = (await mid.sql.get<{ n: bigint }>(
      "SELECT count(*) AS n FROM jobs WHERE status IN ('IN_QUEUE','IN_PROGRESS')",
    ))!.n;
    await mid.close();
    expect(inFlight).toBeGreaterThan(0n);

    const second = await startServer({ dataDir, args });
    servers.push(second);
    await pollUntil(
      async () =>
        ((await (await second.fetch("/v1/account", { key })).json()) as { held_micro: string }).held_micro,
      (h) => h === "0",
      60_000,
    );
    expect(await second.stop()).toBe(0);

    const db = await openServerSql(dataDir);
    const rows = await db.sql.all<{
      id: string;
      status: string;
      hold: string;
      charged_micro: bigint | null;
    }>(
      "SELECT j.id, j.status, h.status AS hold, h.charged_micro FROM jobs j JOIN holds h ON h.id = j.hold_id",
    );
    expect(rows.length).toBe(JOBS);
    for (const r of rows) {
      expect(["COMPLETED", "FAILED"]).toContain(r.status);
      expect(r.hold).toBe(r.status === "COMPLETED" ? "settled" : "released");
    }
    expect(rows.filter((r) => r.status === "FAILED").length).toBe(JOBS / 10);
    expect(await checkInvariants(db.sql)).toEqual([]);
    const charged = rows.reduce((sum, r) => sum + (r.charged_micro ?? 0n), 0n);
    const acct = (await db.sql.get<{ balance_micro: bigint; held_micro: bigint }>(
      "SELECT balance_micro, held_micro FROM accounts WHERE id = ?",
      [accountId],
    ))!;
    expect(acct.held_micro).toBe(0n);
    expect(acct.balance_micro).toBe(1_000_000_000n - charged);
    expect(charged).toBe(BigInt((JOBS * 9) / 10) * 10_000n);
    // Every completed job has its outputs on record.
    const missing = (await db.sql.get<{ n: bigint }>(
      "SELECT count(*) AS n FROM jobs j WHERE status = 'COMPLETED' AND NOT EXISTS (SELECT 1 FROM job_outputs o WHERE o.job_id = j.id)",
    ))!;
    expect(missing.n).toBe(0n);
    await db.close();
  }, 120_000);
});
