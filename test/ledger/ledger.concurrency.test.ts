import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { tempDir } from "../helpers/server.ts";
import { checkInvariants, makeLedger, newAccount } from "./ledger-helpers.ts";

describe("ledger under concurrent writers (separate processes, one database file)", () => {
  test("exactly the affordable number of reservations succeed, with top-ups landing in between", async () => {
    const path = join(tempDir(), "ledger.db");
    const { db, accounts, ledger } = makeLedger({ path });
    const { account } = await newAccount(accounts);
    await ledger.topUp(account.id, 1_000n, null); // affords exactly 100 holds of 10
    const stopFile = join(tempDir(), "stop");
    const workers = Array.from({ length: 4 }, () =>
      Bun.spawn(
        [process.execPath, join(import.meta.dir, "reserve-worker.ts"), path, account.id, "10", stopFile],
        {
          stdout: "pipe",
          stderr: "pipe",
        },
      ),
    );
    // Operator top-ups from this process while the workers run: 20 more holds' worth, in steps.
    for (let i = 0; i < 20; i++) {
      await Bun.sleep(5);
      await ledger.topUp(account.id, 10n, "mid-run credit");
    }
    await Bun.write(stopFile, "stop");
    const results = await Promise.all(
      workers.map(async (w) => {
        const [out, err, code] = await Promise.all([
          new Response(w.stdout).text(),
          new Response(w.stderr).text(),
          w.exited,
        ]);
        if (code !== 0) throw new Error(err);
        return JSON.parse(out) as { ok: number; refused: number };
      }),
    );
    const ok = results.reduce((s, r) => s + r.ok, 0);
    const refused = results.reduce((s, r) => s + r.refused, 0);
    expect(refused).toBeGreaterThanOrEqual(4);
    expect(ok).toBe(120);
    const a = (await accounts.getAccount(account.id))!;
    expect(a.balance_micro).toBe(1_200n);
    expect(a.held_micro).toBe(1_200n);
    expect(await checkInvariants(db)).toEqual([]);
    db.close();
  });
});
