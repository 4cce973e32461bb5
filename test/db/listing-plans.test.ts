// Issue 36: every listing pages by keyset and walks an index in its own order. Each listing runs
// through its service or store on SQLite while the reads it sends are recorded; each read is then
// planned (EXPLAIN QUERY PLAN, with its own parameters). Rules for every read: no temporary b-tree
// for an ORDER BY (except the few bounded ones named below), and a SCAN only as an ordered walk that
// stops at the page's LIMIT; and each listing's page comes from the index named for it. Plans, not
// timings. (docs/performance.md, "Issue 36: streaming exports and keyset paging".)
import { describe, expect, test } from "bun:test";
import { peopleDirectory } from "../../src/admin/directory.ts";
import { RedeemCodeStore } from "../../src/codes/store.ts";
import { billing, walletCsv, walletPage } from "../../src/ledger/figures.ts";
import { walletStatement } from "../../src/ledger/statement.ts";
import { OrderStore } from "../../src/payments/order-store.ts";
import { PeopleStore } from "../../src/people/store.ts";
import { listAllRequests } from "../../src/queue/all-requests.ts";
import { listRequests as listApiRequests } from "../../src/queue/ownership.ts";
import { listRequests, requestsCsv } from "../../src/queue/requests.ts";
import { onPostgres, sqliteOnly } from "../helpers/backend.ts";
import { makeTestApp } from "../helpers/context.ts";
import { csvText } from "../helpers/csv.ts";
import { seedJob } from "../queue/seed-jobs.ts";

const t = await makeTestApp();
const { ctx } = t;
const db = ctx.sqlite;
const account = t.account.id;
await ctx.ledger.topUp(account, 100_000_000n, null);
for (let i = 0; i < 3; i++)
  await seedJob(ctx, account, { keyId: t.keyId, createdAt: Date.now() - i * 1000, status: "COMPLETED" });

interface Read {
  sql: string;
  params: unknown[];
}

/** The reads a call sends through the app's Sql, each with its parameters. */
async function readsOf(run: () => Promise<unknown>): Promise<Read[]> {
  type Reader = (q: string, p?: readonly unknown[]) => Promise<unknown>;
  const sql = ctx.sql as unknown as { all: Reader; get: Reader };
  const seen: Read[] = [];
  const { all, get } = sql;
  const record =
    (f: Reader): Reader =>
    async (q, p = []) => {
      seen.push({ sql: q.replace(/\s+/g, " "), params: [...p] });
      return await f.call(ctx.sql, q, p);
    };
  sql.all = record(all);
  sql.get = record(get);
  try {
    await run();
  } finally {
    sql.all = all;
    sql.get = get;
  }
  return seen;
}

const planOf = (r: Read) =>
  (db!.query(`EXPLAIN QUERY PLAN ${r.sql}`).all(...(r.params as never[])) as { detail: string }[]).map(
    (x) => x.detail,
  );

/**
 * Sorted in a temporary b-tree, and bounded: an account's keys (the key names of a page), a
 * statement page's job entries (at most 3 per row, by ledger_entries_hold) and a request's webhook
 * deliveries (one per final state).
 */
const BOUNDED_SORTS = [
  /^SELECT \* FROM api_keys WHERE account_id = \?/,
  /^SELECT \* FROM ledger_entries WHERE hold_id IS NOT NULL/,
  /^SELECT \* FROM webhook_deliveries WHERE request_id = \?/,
];

/** [listing, run it, the index its page walks (a substring of the page read's plan)]. */
const LISTINGS: [string, () => Promise<unknown>, string][] = [
  ["console requests", () => listRequests(ctx, account, {}), "jobs_account (account_id=? AND id>? AND id<?)"],
  [
    "by key",
    () => listRequests(ctx, account, { keyId: t.keyId }),
    "jobs_by_key (key_id=? AND id>? AND id<?)",
  ],
  [
    "by model (migration 029)",
    () => listRequests(ctx, account, { modelId: "sandbox/image" }),
    "jobs_account_model (account_id=? AND model_id=? AND id>? AND id<?)",
  ],
  [
    "by status",
    () => listRequests(ctx, account, { status: "FAILED" }),
    "jobs_account (account_id=? AND id>? AND id<?)",
  ],
  [
    "by period",
    () => listRequests(ctx, account, { from: "2026-01-01", to: "2026-01-31" }),
    "jobs_account (account_id=? AND id>? AND id<?)",
  ],
  [
    "requests.csv by model",
    async () => await csvText(requestsCsv(ctx, account, { modelId: "sandbox/image" })),
    "jobs_account_model (account_id=? AND model_id=? AND id>? AND id<?)",
  ],
  ["operator's requests", () => listAllRequests(ctx, {}), "sqlite_autoindex_jobs_1 (id>? AND id<?)"],
  [
    "operator's, one account",
    () => listAllRequests(ctx, { accountId: account }),
    "jobs_account (account_id=? AND id>? AND id<?)",
  ],
  [
    "operator's, one model",
    () => listAllRequests(ctx, { modelId: "sandbox/image" }),
    "jobs_by_model (model_id=? AND id>? AND id<?)",
  ],
  [
    "GET /v1/requests",
    () => listApiRequests(ctx, account, { limit: 10, before: null }),
    "jobs_account (account_id=? AND id>? AND id<?)",
  ],
  [
    "GET /v1/requests?model_id",
    () => listApiRequests(ctx, account, { limit: 10, before: null, modelId: "sandbox/image" }),
    "jobs_account_model (account_id=? AND model_id=? AND id>? AND id<?)",
  ],
  [
    "GET /v1/account/ledger",
    () => ctx.wallet.entries(account, 10, null),
    "ledger_entries_account (account_id=? AND id<?)",
  ],
  ["wallet entries", () => walletPage(ctx, account, {}), "ledger_entries_account (account_id=? AND id<?)"],
  [
    "wallet entries, API",
    () => walletPage(ctx, account, { source: "API" }),
    "ledger_entries_account (account_id=? AND id<?)",
  ],
  [
    "wallet entries, TOPUP",
    () => walletPage(ctx, account, { source: "TOPUP" }),
    "ledger_entries_credits (account_id=? AND id<?)",
  ],
  [
    "wallet statement",
    () => walletStatement(ctx, account, {}),
    "ledger_entries_account (account_id=? AND id<?)",
  ],
  [
    "wallet.csv",
    async () => await csvText(walletCsv(ctx, account)),
    "ledger_entries_account (account_id=? AND id<?)",
  ],
  ["a key's last use (Overview)", () => ctx.jobs.lastJobAt(t.keyId), "jobs_by_key (key_id=?)"],
  ["operator's accounts", () => ctx.accounts.listAccounts(10, "acc_0"), "sqlite_autoindex_accounts_1 (id>?)"],
  ["operator's people", () => new PeopleStore(ctx.sql).listPeople(10, "p"), "INTEGER PRIMARY KEY (rowid>?)"],
  [
    "operator's invites",
    () => new PeopleStore(ctx.sql).listInvites(10, "i"),
    "INTEGER PRIMARY KEY (rowid<?)",
  ],
  [
    "orders",
    () => new OrderStore(ctx.sql).list({ limit: 10, before: "ord_z" }),
    "sqlite_autoindex_orders_1 (id<?)",
  ],
  [
    "orders of an account",
    () => new OrderStore(ctx.sql).list({ limit: 10, accountId: account }),
    "orders_account (account_id=?)",
  ],
  [
    "orders by status",
    () => new OrderStore(ctx.sql).list({ limit: 10, status: "paid" }),
    "orders_status (status=?)",
  ],
  [
    "payment notifications",
    () => new OrderStore(ctx.sql).notifications({ limit: 10, before: 5n }),
    "INTEGER PRIMARY KEY (rowid<?)",
  ],
  ["code batches", () => new RedeemCodeStore(ctx.sql).batches(0, 10, "b"), "INTEGER PRIMARY KEY (rowid<?)"],
  ["billing's top-ups", () => billing(ctx, account, {}), "ledger_entries_credits (account_id=? AND id<?)"],
  [
    "studio runs of a person",
    () => ctx.jobs.listByPerson(account, "person_x", 10, null),
    "jobs_by_person (person_id=? AND id<?)",
  ],
  ["operator's people directory", () => peopleDirectory(ctx, 10, ""), "INTEGER PRIMARY KEY (rowid>?)"],
  [
    "a request's webhook delivery",
    () => ctx.outbox.deliveryFor("r"),
    "webhook_deliveries_request (request_id=?)",
  ],
  ["operator's recent mail", () => ctx.mailer.outbox.recent(10), "mail_outbox_created"],
];

describe.skipIf(onPostgres)(sqliteOnly("listing plans", "SQLite's query plans"), () => {
  for (const [name, run, index] of LISTINGS) {
    test(`${name}: keyset from ${index.split(" ")[0]}; no full scan, no sort of history`, async () => {
      const reads = await readsOf(run);
      expect(reads.length).toBeGreaterThan(0);
      const plans = reads.map((r) => ({ sql: r.sql, plan: planOf(r) }));
      expect(
        plans.some((p) => p.plan.some((line) => line.includes(index))),
        JSON.stringify(plans),
      ).toBe(true);
      for (const p of plans) {
        const what = `${name}: ${p.sql} => ${p.plan.join(" / ")}`;
        expect(p.sql, what).not.toMatch(/\bOFFSET\b/i);
        // A whole sort; "FOR LAST TERM OF ORDER BY" (or "RIGHT PART") only orders the ties of an
        // index walked in order, which stops at the LIMIT.
        if (!BOUNDED_SORTS.some((re) => re.test(p.sql.trim())))
          expect(
            p.plan.some((line) => line.includes("USE TEMP B-TREE FOR ORDER BY")),
            what,
          ).toBe(false);
        // An ordered walk that stops at the page: the statement ends in LIMIT.
        for (const line of p.plan.filter((l) => l.startsWith("SCAN ") && !l.startsWith("SCAN json_each")))
          expect(/LIMIT \?\d*\s*$/.test(p.sql), `${what} (${line})`).toBe(true);
      }
    });
  }
});
