import { afterAll, describe, expect, test } from "bun:test";
import { startFunded } from "../helpers/api.ts";
import { openServerSql, runGengate } from "../helpers/server.ts";
import { checkInvariants } from "./ledger-helpers.ts";

let s: Awaited<ReturnType<typeof startFunded>> | undefined;
afterAll(() => s?.cleanup());

describe("parallel HTTP reservations against one account", () => {
  test("exactly the affordable number succeed, the rest get 402, nothing goes negative, with a CLI credit racing", async () => {
    // 0.50 USD affords 50 jobs of 0.01; a CLI credit of 0.20 lands during the burst: 70 in all.
    s = await startFunded(
      "[limits]\nin_flight = 100000\nwrites_per_minute = 100000\n[queue]\nconcurrency = { sandbox = 1 }\n",
      "0.50",
    );
    const slow = { prompt: "x", sandbox: { delay_ms: 60_000 } }; // nothing settles during the test
    const burst = Array.from({ length: 150 }, () => s!.post("/v1/queue/sandbox/image", slow));
    const credit = runGengate([
      "account",
      "credit",
      ((await (await s.get("/v1/account")).json()) as { id: string }).id,
      "0.20",
      "--data-dir",
      s.dataDir,
    ]);
    const results = await Promise.all(burst);
    expect((await credit).code).toBe(0);
    // Whatever the credit missed during the burst, a final round uses it up.
    const late = await Promise.all(
      Array.from({ length: 30 }, () => s!.post("/v1/queue/sandbox/image", slow)),
    );
    const all = [...results, ...late];
    const codes = await Promise.all(
      all.map(async (r) =>
        r.status === 202 ? "ok" : ((await r.json()) as { error: { code: string } }).error.code,
      ),
    );
    expect(codes.filter((c) => c === "ok").length).toBe(70);
    expect(codes.filter((c) => c !== "ok").every((c) => c === "insufficient_balance")).toBe(true);
    const account = (await (await s.get("/v1/account")).json()) as {
      balance_micro: string;
      held_micro: string;
      available_micro: string;
    };
    expect(account).toMatchObject({ balance_micro: "700000", held_micro: "700000", available_micro: "0" });
    const db = await openServerSql(s.dataDir);
    expect(await checkInvariants(db.sql)).toEqual([]);
    await db.close();
  });
});
