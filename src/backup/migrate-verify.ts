import type { Sql } from "../db/sql.ts";
import type { BlobBackend } from "../files/blob-backend.ts";
import { pool, type StoredFile, sha256Of } from "./migrate-files.ts";
import { type Table, tableDigest } from "./migrate-rows.ts";

/**
 * Checks of `gengate migrate-data` (src/backup/migrate-data.ts): the money of each side adds up
 * (before the copy on the source, after it on both), and the verification that reads both sides again.
 */

interface AccountMoney {
  id: string;
  balance_micro: bigint;
  held_micro: bigint;
  ledger_balance: bigint;
  ledger_held: bigint;
  open_holds: bigint;
}

interface Money {
  accounts: AccountMoney[];
  keys: { id: string; held_micro: bigint; open_holds: bigint }[];
}

/** Every account's and key's money as its row says and as the ledger and holds add up. */
export async function money(sql: Sql): Promise<Money> {
  const accounts = await sql.all<AccountMoney>(
    `SELECT a.id, a.balance_micro, a.held_micro,
       COALESCE((SELECT f.balance_after_micro - f.balance_delta_micro FROM ledger_entries f
           WHERE f.account_id = a.id ORDER BY f.id LIMIT 1), 0)
         + COALESCE((SELECT sum(l.balance_delta_micro) FROM ledger_entries l WHERE l.account_id = a.id), 0) AS ledger_balance,
       COALESCE((SELECT f.held_after_micro - f.held_delta_micro FROM ledger_entries f
           WHERE f.account_id = a.id ORDER BY f.id LIMIT 1), 0)
         + COALESCE((SELECT sum(l.held_delta_micro) FROM ledger_entries l WHERE l.account_id = a.id), 0) AS ledger_held,
       COALESCE((SELECT sum(h.amount_micro) FROM holds h WHERE h.account_id = a.id AND h.status = 'open'), 0) AS open_holds
     FROM accounts a ORDER BY a.id`,
  );
  const keys = await sql.all<{ id: string; held_micro: bigint; open_holds: bigint }>(
    `SELECT k.id, k.held_micro,
       COALESCE((SELECT sum(h.amount_micro) FROM holds h WHERE h.key_id = k.id AND h.status = 'open'), 0) AS open_holds
     FROM api_keys k ORDER BY k.id`,
  );
  return { accounts, keys };
}

export function moneyProblems(side: string, m: Money): string[] {
  const out: string[] = [];
  for (const a of m.accounts) {
    if (a.balance_micro !== a.ledger_balance)
      out.push(
        `${side}: account ${a.id} balance ${a.balance_micro} != its ledger entries' sum ${a.ledger_balance}`,
      );
    if (a.held_micro !== a.ledger_held)
      out.push(
        `${side}: account ${a.id} held ${a.held_micro} != its ledger entries' held sum ${a.ledger_held}`,
      );
    if (a.held_micro !== a.open_holds)
      out.push(`${side}: account ${a.id} held ${a.held_micro} != its open holds ${a.open_holds}`);
  }
  for (const k of m.keys)
    if (k.held_micro !== k.open_holds)
      out.push(`${side}: key ${k.id} held ${k.held_micro} != its open holds ${k.open_holds}`);
  return out;
}

/** Every difference between the data dir and the target; empty when the copy is exact. */
export async function verify(
  src: Sql,
  pg: Sql,
  tables: Table[],
  files: StoredFile[],
  fromBlobs: BlobBackend,
  toBlobs: BlobBackend | null,
  say: (line: string) => void,
): Promise<string[]> {
  const problems: string[] = [];
  for (const t of tables) {
    const [a, b] = await Promise.all([tableDigest(src, t), tableDigest(pg, t)]);
    if (a.rows !== b.rows)
      problems.push(`table ${t.name}: ${a.rows} rows in the data dir, ${b.rows} in the target`);
    else if (a.sha256 !== b.sha256) problems.push(`table ${t.name}: the rows differ (same count, ${a.rows})`);
  }
  say(`verified ${tables.length} tables`);
  const [ms, mt] = await Promise.all([money(src), money(pg)]);
  problems.push(...moneyProblems("data dir", ms), ...moneyProblems("target", mt));
  const byId = new Map(mt.accounts.map((a) => [a.id, a]));
  for (const a of ms.accounts) {
    const b = byId.get(a.id);
    if (!b) problems.push(`account ${a.id} is missing from the target`);
    else if (a.balance_micro !== b.balance_micro || a.held_micro !== b.held_micro)
      problems.push(
        `account ${a.id}: balance/held ${a.balance_micro}/${a.held_micro} in the data dir, ${b.balance_micro}/${b.held_micro} in the target`,
      );
  }
  if (mt.accounts.length !== ms.accounts.length)
    problems.push(`${ms.accounts.length} accounts in the data dir, ${mt.accounts.length} in the target`);
  say(`verified the money of ${ms.accounts.length} accounts`);
  let done = 0;
  let last = performance.now();
  await pool(files, 4, async (f) => {
    const [a, b] = await Promise.all([
      sha256Of(fromBlobs.stream(f.path)).catch((e) => `unreadable (${(e as Error).message})`),
      toBlobs ? sha256Of(toBlobs.stream(f.path)).catch((e) => `unreadable (${(e as Error).message})`) : null,
    ]);
    if (a !== f.sha256)
      problems.push(`file ${f.path}: SHA-256 ${a} in the data dir's store, its row says ${f.sha256}`);
    if (b !== null && b !== f.sha256)
      problems.push(`file ${f.path}: SHA-256 ${b} in the target store, its row says ${f.sha256}`);
    done++;
    if (performance.now() - last > 1000) {
      last = performance.now();
      say(`verifying files: ${done}/${files.length}`);
    }
  });
  say(`verified ${files.length} files`);
  return problems;
}
