// `gengate account create --credit / credit / adjust` and `gengate code create` against the maximum
// balance (MAX_BALANCE_MICRO, docs/money.md "The maximum balance"): refused with one line naming the
// limit, exit 1 (`code create`: 2, its input errors are usage errors), nothing written. Before it, a credit past the balance column's 64-bit range failed
// in the database (SQLITE_CONSTRAINT_DATATYPE, or PostgreSQL's bigint out of range). Runs on either
// backend (GENGATE_TEST_BACKEND=postgres: scripts/test-postgres), against the binary in CI.
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { formatMicro, MAX_BALANCE_MICRO } from "../../src/lib/money.ts";
import { countRows } from "../helpers/backend.ts";
import { openServerSql, runGengate, tempDir } from "../helpers/server.ts";

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const dd = ["--data-dir", dir];
const MAX = formatMicro(MAX_BALANCE_MICRO); // "1000000000000.00"
const LIMIT_LINE = `gengate: A credit of 0.000001 USD would take the balance of ${MAX} above the maximum balance of ${MAX} USD.\n`;

async function entries(): Promise<number> {
  const db = await openServerSql(dir);
  try {
    return await countRows(db.sql, "ledger_entries");
  } finally {
    await db.close();
  }
}

describe("gengate and the maximum balance", () => {
  test("credit and adjust past it: exit 1, one line naming the limit, nothing written", async () => {
    await (await openServerSql(dir, { create: true })).close();
    const created = await runGengate([
      "account",
      "create",
      "--name",
      "full",
      "--credit",
      MAX,
      "--json",
      ...dd,
    ]);
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    const { account_id } = JSON.parse(created.stdout) as { account_id: string };
    const before = await entries();

    const credit = await runGengate(["account", "credit", account_id, "0.000001", ...dd]);
    expect({ code: credit.code, stderr: credit.stderr }).toEqual({ code: 1, stderr: LIMIT_LINE });
    const adjust = await runGengate(["account", "adjust", account_id, "0.000001", "--reason", "more", ...dd]);
    expect({ code: adjust.code, stderr: adjust.stderr }).toEqual({ code: 1, stderr: LIMIT_LINE });
    const huge = await runGengate(["account", "credit", account_id, "4611686018427.387904", ...dd]);
    expect(huge.code).toBe(1);
    expect(huge.stderr).toContain(`above the maximum balance of ${MAX} USD`);
    expect(await entries()).toBe(before);

    const tooBig = await runGengate([
      "account",
      "create",
      "--name",
      "huge",
      "--credit",
      "1000000000000.01",
      ...dd,
    ]);
    expect(tooBig.code).toBe(1);
    expect(tooBig.stderr).toContain(`above the maximum balance of ${MAX} USD`);
    const code = await runGengate([
      "code",
      "create",
      "--amount",
      "1000000000000.01",
      "--currency",
      "USD",
      ...dd,
    ]);
    // `code create` reports its input errors as usage errors (exit 2), naming the flag.
    expect(code.code).toBe(2);
    expect(code.stderr).toContain(`--amount: amount may be at most the maximum balance of ${MAX}`);
    expect(await entries()).toBe(before);

    // Debits still work at the limit.
    const down = await runGengate([
      "account",
      "adjust",
      account_id,
      "-1",
      "--reason",
      "less",
      "--json",
      ...dd,
    ]);
    expect(down.code).toBe(0);
    expect(JSON.parse(down.stdout).balance_micro).toBe((MAX_BALANCE_MICRO - 1_000_000n).toString());
  }, 60_000);
});
