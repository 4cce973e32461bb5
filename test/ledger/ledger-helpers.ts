import type { Database } from "bun:sqlite";
import { AccountStore, type Currency } from "../../src/accounts/store.ts";
import { migrate, openDatabase } from "../../src/db/database.ts";
import type { Dialect, Sql } from "../../src/db/sql.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { latencyBucket } from "../../src/queue/job-stats-store.ts";
import { openTestSql } from "../helpers/postgres.ts";
import { sqlOf } from "../helpers/sql.ts";

export function makeLedger(options: { path?: string; now?: () => number } = {}) {
  const db = openDatabase(options.path ?? ":memory:");
  migrate(db);
  const accounts = new AccountStore(sqlOf(db));
  const ledger = new Ledger(sqlOf(db), {
    billingUrl: "http://gengate.test/console/billing",
    now: options.now,
  });
  return { db, accounts, ledger };
}

/** The ledger over a fresh database of either dialect (test/helpers/postgres.ts). */
export async function openLedger(dialect: Dialect, options: { now?: () => number } = {}) {
  const t = await openTestSql(dialect, { migrated: true });
  const accounts = new AccountStore(t.sql);
  const ledger = new Ledger(t.sql, { billingUrl: "http://gengate.test/console/billing", now: options.now });
  return { sql: t.sql, accounts, ledger, close: t.close };
}

export async function newAccount(
  accounts: AccountStore,
  currency: Currency = "USD",
  name = `acct-${Math.random()}`,
) {
  return await accounts.createAccount(name, currency);
}

/** The wallet invariants, checked straight against the tables. Returns a list of violations. */
/** A hold of an API call with no key, model or request: only the money matters. */
export async function reserveUsd(ledger: Ledger, accountId: string, quotedUsdMicro: bigint) {
  return await ledger.reserve({
    accountId,
    keyId: null,
    modelId: null,
    requestId: null,
    source: "API",
    quotedUsdMicro,
  });
}

/** The ledger's invariants over either backend (a bun:sqlite connection is read through its executor). */
export async function checkInvariants(db: Database | Sql): Promise<string[]> {
  const sql: Sql = "dialect" in db ? db : sqlOf(db);
  const problems: string[] = [];
  const accounts = (await sql.all("SELECT id, balance_micro, held_micro FROM accounts")) as {
    id: string;
    balance_micro: bigint;
    held_micro: bigint;
  }[];
  for (const a of accounts) {
    const sums = (await sql.get(
      "SELECT coalesce(sum(balance_delta_micro), 0) AS b, coalesce(sum(held_delta_micro), 0) AS h FROM ledger_entries WHERE account_id = ?",
      [a.id],
    )) as { b: bigint; h: bigint };
    const open = (await sql.get(
      "SELECT coalesce(sum(amount_micro), 0) AS h FROM holds WHERE account_id = ? AND status = 'open'",
      [a.id],
    )) as { h: bigint };
    if (sums.b !== a.balance_micro)
      problems.push(`${a.id}: balance ${a.balance_micro} != sum of entries ${sums.b}`);
    if (sums.h !== a.held_micro)
      problems.push(`${a.id}: held ${a.held_micro} != sum of held deltas ${sums.h}`);
    if (open.h !== a.held_micro) problems.push(`${a.id}: held ${a.held_micro} != open holds ${open.h}`);
    if (a.balance_micro - a.held_micro < 0n) problems.push(`${a.id}: available negative`);
  }
  // Per-key counters kept with every change must equal what they count.
  const keys = (await sql.all(`SELECT k.id, k.held_micro, k.open_jobs,
         (SELECT coalesce(sum(amount_micro), 0) FROM holds h WHERE h.key_id = k.id AND h.status = 'open') AS open_held,
         (SELECT count(*) FROM jobs j WHERE j.key_id = k.id AND j.status IN ('IN_QUEUE', 'IN_PROGRESS')) AS open_jobs_now
       FROM api_keys k`)) as {
    id: string;
    held_micro: bigint;
    open_jobs: bigint;
    open_held: bigint;
    open_jobs_now: bigint;
  }[];
  for (const k of keys) {
    if (k.held_micro !== k.open_held)
      problems.push(`key ${k.id}: held counter ${k.held_micro} != open holds ${k.open_held}`);
    if (k.open_jobs !== k.open_jobs_now)
      problems.push(`key ${k.id}: open_jobs ${k.open_jobs} != open jobs ${k.open_jobs_now}`);
  }
  // The studio's per-person counter (migration 015), likewise.
  const people = (await sql.all(`SELECT p.id, p.open_jobs,
         (SELECT count(*) FROM jobs j WHERE j.person_id = p.id AND j.status IN ('IN_QUEUE', 'IN_PROGRESS')) AS open_jobs_now
       FROM people p`)) as { id: string; open_jobs: bigint; open_jobs_now: bigint }[];
  for (const p of people) {
    if (p.open_jobs !== p.open_jobs_now)
      problems.push(`person ${p.id}: open_jobs ${p.open_jobs} != open jobs ${p.open_jobs_now}`);
  }
  const holds = (await sql.all("SELECT id, status, amount_micro, charged_micro FROM holds")) as {
    id: string;
    status: string;
    amount_micro: bigint;
    charged_micro: bigint | null;
  }[];
  for (const h of holds) {
    const entries = (await sql.all(
      "SELECT kind, amount_micro FROM ledger_entries WHERE hold_id = ? ORDER BY id",
      [h.id],
    )) as {
      kind: string;
      amount_micro: bigint;
    }[];
    const kinds = entries.map((e) => e.kind).join(",");
    const expected =
      h.status === "open"
        ? ["hold"]
        : h.status === "released"
          ? ["hold,release"]
          : h.charged_micro === h.amount_micro
            ? ["hold,charge"]
            : ["hold,charge,release"];
    if (!expected.includes(kinds)) problems.push(`hold ${h.id} (${h.status}) has entries ${kinds}`);
    if (h.charged_micro !== null && h.charged_micro > h.amount_micro)
      problems.push(`hold ${h.id} charged above its amount`);
    const resolvedTotal = entries.filter((e) => e.kind !== "hold").reduce((s, e) => s + e.amount_micro, 0n);
    if (h.status !== "open" && resolvedTotal !== h.amount_micro)
      problems.push(`hold ${h.id} resolved ${resolvedTotal} of ${h.amount_micro}`);
  }
  problems.push(...(await rollupProblems(sql)));
  return problems;
}

/**
 * The rollups kept with every settlement (usage_daily, migration 027; key_spend) equal the charge
 * entries they sum, to the micro-unit and the call: regrouped here from the entries, row by row.
 */
export async function rollupProblems(sql: Sql): Promise<string[]> {
  type Cell = { spent: bigint; calls: bigint };
  const charges = await sql.all<{
    account_id: string;
    key_id: string | null;
    model_id: string | null;
    amount_micro: bigint;
    created_at: bigint;
  }>(
    "SELECT account_id, key_id, model_id, amount_micro, created_at FROM ledger_entries WHERE kind = 'charge'",
  );
  const daily = new Map<string, Cell>();
  const monthly = new Map<string, Cell>();
  const add = (m: Map<string, Cell>, k: string, amount: bigint) => {
    const c = m.get(k) ?? { spent: 0n, calls: 0n };
    c.spent += amount;
    c.calls += 1n;
    m.set(k, c);
  };
  for (const c of charges) {
    const day = BigInt(c.created_at) / 86_400n;
    add(daily, `${c.account_id}|${day}|${c.key_id ?? ""}|${c.model_id ?? ""}`, c.amount_micro);
    const month = new Date(Number(c.created_at) * 1000).toISOString().slice(0, 7);
    if (c.key_id !== null) add(monthly, `${c.key_id}|${month}|${c.model_id ?? ""}`, c.amount_micro);
  }
  const compare = (
    name: string,
    expected: Map<string, Cell>,
    rows: { k: string; spent: bigint; calls: bigint }[],
  ) => {
    const out: string[] = [];
    const got = new Map(rows.map((r) => [r.k, { spent: BigInt(r.spent), calls: BigInt(r.calls) }]));
    for (const [k, e] of expected) {
      const g = got.get(k);
      if (!g || g.spent !== e.spent || g.calls !== e.calls)
        out.push(`${name} ${k}: ${g ? `${g.spent}/${g.calls}` : "missing"} != charges ${e.spent}/${e.calls}`);
    }
    for (const [k, g] of got) {
      if (!expected.has(k) && (g.spent !== 0n || g.calls !== 0n))
        out.push(`${name} ${k}: ${g.spent}/${g.calls} without charges`);
    }
    return out;
  };
  const dailyRows = await sql.all<{ k: string; spent: bigint; calls: bigint }>(
    "SELECT account_id || '|' || day || '|' || key_id || '|' || model_id AS k, spent_micro AS spent, calls FROM usage_daily",
  );
  const monthlyRows = await sql.all<{ k: string; spent: bigint; calls: bigint }>(
    "SELECT key_id || '|' || month || '|' || model_id AS k, spent_micro AS spent, calls FROM key_spend",
  );
  return [...compare("usage_daily", daily, dailyRows), ...compare("key_spend", monthly, monthlyRows)];
}

/**
 * The requests rollup (job_stats_daily, migration 028) against the final jobs themselves: each
 * row's n and every latency bucket, row by row (src/queue/job-stats-store.ts).
 */
export async function jobStatsProblems(sql: Sql): Promise<string[]> {
  const jobs = await sql.all<{
    account_id: string;
    key_id: string | null;
    model_id: string;
    source: string;
    status: string;
    created_at: bigint;
    completed_at: bigint | null;
  }>(
    "SELECT account_id, key_id, model_id, source, status, created_at, completed_at FROM jobs WHERE status IN ('COMPLETED', 'FAILED', 'CANCELLED')",
  );
  const expected = new Map<string, { n: number; latency: Record<string, number> }>();
  for (const j of jobs) {
    const created = Number(j.created_at);
    const k = [
      j.account_id,
      Math.floor(created / 86_400_000),
      j.key_id ?? "",
      j.model_id,
      j.source,
      j.status,
    ].join("|");
    const e = expected.get(k) ?? { n: 0, latency: {} };
    const b = String(latencyBucket(Number(j.completed_at ?? j.created_at) - created));
    e.n++;
    e.latency[b] = (e.latency[b] ?? 0) + 1;
    expected.set(k, e);
  }
  const rows = await sql.all<{ k: string; n: bigint; latency: string }>(
    "SELECT account_id || '|' || day || '|' || key_id || '|' || model_id || '|' || source || '|' || status AS k, n, latency FROM job_stats_daily",
  );
  const got = new Map(rows.map((r) => [r.k, { n: Number(r.n), latency: JSON.parse(r.latency) }]));
  const problems: string[] = [];
  for (const [k, e] of expected) {
    if (!Bun.deepEquals(got.get(k), e))
      problems.push(`job_stats_daily ${k}: ${JSON.stringify(got.get(k))} != ${JSON.stringify(e)}`);
    got.delete(k);
  }
  for (const k of got.keys()) problems.push(`job_stats_daily ${k} without final jobs`);
  return problems;
}
