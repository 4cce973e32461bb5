import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createServices } from "../../src/app/services.ts";
import { migrate, openDatabase } from "../../src/db/database.ts";
import { constraintKind, tableNames } from "../helpers/backend.ts";
import { tempDir } from "../helpers/server.ts";
import { sqlOf } from "../helpers/sql.ts";
import { codesApp } from "./helpers.ts";

describe("redeem codes: security", () => {
  test("a code redeemed by one account is invalid for another, and credits only the first", async () => {
    const t = await codesApp();
    const other = await t.ctx.accounts.createAccount("other", "USD");
    const { codes } = await t.batch("9");
    await t.codes.redeem(t.account.id, codes[0]!, t.keyId);
    await expect(
      (async () => await t.codes.redeem(other.account.id, codes[0]!, other.keyId))(),
    ).rejects.toThrow("not valid");
    expect(await t.balance(other.account.id)).toBe(0n);
    expect(await t.balance(t.account.id)).toBe(9_000_000n);
  });

  test("the throttle is per account: one account's failures do not lock out another", async () => {
    const t = await codesApp();
    const other = await t.ctx.accounts.createAccount("other", "USD");
    for (let i = 0; i < 5; i++)
      await expect((async () => await t.codes.redeem(t.account.id, `x${i}`, t.keyId))()).rejects.toThrow();
    const { codes } = await t.batch("1", 2);
    await expect((async () => await t.codes.redeem(t.account.id, codes[0]!, t.keyId))()).rejects.toThrow(
      "Too many",
    );
    await t.codes.redeem(other.account.id, codes[0]!, other.keyId);
    expect(await t.balance(other.account.id)).toBe(1_000_000n);
  });

  test("only SHA-256 digests are stored: no table holds a code, in any form", async () => {
    const t = await codesApp();
    const { codes } = await t.batch("1", 20, { note: "audit" });
    await t.codes.redeem(t.account.id, codes[0]!, t.keyId);
    const forms = codes.flatMap((c) => [c, c.replaceAll("-", ""), c.toLowerCase()]);
    const tables = await tableNames(t.ctx.sql);
    expect(tables).toContain("redeem_codes");
    let cells = 0;
    for (const table of tables) {
      for (const row of await t.ctx.sql.all<Record<string, unknown>>(`SELECT * FROM "${table}"`)) {
        for (const v of Object.values(row)) {
          const text = v instanceof Uint8Array ? Buffer.from(v).toString("latin1") : String(v);
          cells++;
          for (const f of forms) expect(text.includes(f)).toBe(false);
        }
      }
    }
    expect(cells).toBeGreaterThan(100);
    const hashes = await t.ctx.sql.all<{ h: Uint8Array }>("SELECT code_hash AS h FROM redeem_codes");
    expect(hashes).toHaveLength(20);
    for (const { h } of hashes) expect(h.byteLength).toBe(32);
  });

  test("the database refuses a half-redeemed or re-credited code", async () => {
    const t = await codesApp();
    const { codes } = await t.batch("1");
    const r = await t.codes.redeem(t.account.id, codes[0]!, t.keyId);
    const sql = t.ctx.sql;
    expect(
      await constraintKind(sql.run("UPDATE redeem_codes SET redeemed_by = NULL WHERE id = ?", [r.codeId])),
    ).toBe("check");
    expect(
      await constraintKind(sql.run("UPDATE redeem_codes SET revoked_at = 1 WHERE id = ?", [r.codeId])),
    ).toBe("check");
    // The ledger's unique index: a second TOPUP naming the same code fails.
    expect(
      await constraintKind(t.ctx.ledger.topUp(t.account.id, 1_000_000n, "again", "TOPUP", r.codeId)),
    ).toBe("unique");
    expect(await t.balance(t.account.id)).toBe(1_000_000n);
    expect(
      await constraintKind(
        sql.run(
          "INSERT INTO redeem_batches (id, currency, amount_micro, code_count, created_at) VALUES ('rbatch_x', 'USD', 0, 1, 1)",
        ),
      ),
    ).toBe("check");
  });

  test("two accounts redeeming one code at the same instant, from separate processes: credited once", async () => {
    const dir = tempDir("gengate-race-");
    const path = join(dir, "gengate.db");
    const db = openDatabase(path);
    migrate(db);
    const s = createServices(sqlOf(db), "http://gengate.test");
    const a = (await s.accounts.createAccount("a", "USD")).account.id;
    const b = (await s.accounts.createAccount("b", "USD")).account.id;
    const { codes } = await s.codes.createBatchFrom({ amount: "7", currency: "USD" });
    const startAt = Date.now() + 1500;
    // Four contenders per account, all at once.
    const procs = [a, b, a, b, a, b, a, b].map((acct) =>
      Bun.spawn(
        [
          process.execPath,
          join(import.meta.dir, "redeem-race.worker.ts"),
          path,
          acct,
          codes[0]!,
          String(startAt),
        ],
        {
          stdout: "pipe",
          stderr: "pipe",
        },
      ),
    );
    const outcomes = await Promise.all(
      procs.map(async (p) => {
        const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
        await p.exited;
        if (!out.trim()) throw new Error(`worker printed nothing: ${err}`);
        return JSON.parse(out) as { ok: boolean; code?: string };
      }),
    );
    expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
    expect(outcomes.filter((o) => !o.ok).map((o) => o.code)).toEqual(Array(7).fill("invalid_code"));
    const balances = await Promise.all(
      [a, b].map(async (id) => (await s.accounts.getAccount(id))!.balance_micro),
    );
    expect(balances[0]! + balances[1]!).toBe(7_000_000n);
    const topups = db
      .query<{ n: bigint }, []>("SELECT count(*) AS n FROM ledger_entries WHERE source = 'TOPUP'")
      .get()!.n;
    expect(topups).toBe(1n);
    db.close();
  }, 60_000);
});
