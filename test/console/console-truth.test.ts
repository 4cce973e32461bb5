// Issue 15, "One source of truth", at page level (seeded; FC_SEED replays, FC_RUNS runs more): after a
// random mix of jobs (completed, failed, cancelled, partial units; a USD and a RUB account; the
// generator of test/ledger/one-source-of-truth.property.test.ts), the overview page, the usage page
// (per month, per day, by model and by key), its CSV, GET /v1/account/spend, GET /v1/account and the
// wallet page and CSV agree to the micro-unit. Pages are read through their <data value="MICRO">
// elements: exact figures, not rounded text.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { monthOf } from "../../src/ledger/month.ts";
import { json } from "../helpers/context.ts";
import { csvObjects } from "../helpers/csv.ts";
import { caseArb, runCases, sumBy } from "../ledger/truth-cases.ts";
import { Browser, ORIGIN, PASSWORD } from "./helpers.ts";

const CLIENT = { ip: null, userAgent: null };

const SEED = Number(process.env.FC_SEED ?? 20261124);
const RUNS = Number(process.env.FC_RUNS ?? 8);

const seen = { rubCharges: 0, months: 0, entries: 0 };

type Spend = {
  total_micro: string;
  by_key: { key_id: string; spent_micro: string }[];
  by_model: { model_id: string; spent_micro: string }[];
};

/** Every <data value> in a fragment. */
const values = (fragment: string) =>
  [...fragment.matchAll(/<data value="(-?\d+)">/g)].map((m) => BigInt(m[1]!));

/** The <tr data-ATTR="ID">...</tr> rows of a page, by ID. */
function rows(page: string, attr: string): Map<string, string> {
  return new Map(
    [...page.matchAll(new RegExp(`<tr data-${attr}="([^"]*)">([\\s\\S]*?)</tr>`, "g"))].map((m) => [
      m[1]!,
      m[2]!,
    ]),
  );
}

function figure(page: string, id: string): bigint {
  const m = new RegExp(`id="${id}"[\\s\\S]*?<data value="(-?\\d+)">`).exec(page);
  if (!m) throw new Error(`no figure #${id}`);
  return BigInt(m[1]!);
}

/** One table's body (by its id). */
function table(page: string, id: string): string {
  const m = new RegExp(`<table id="${id}">([\\s\\S]*?)</table>`).exec(page);
  if (!m) throw new Error(`no table #${id}`);
  return m[1]!;
}

describe("one source of truth, page level (seeded)", () => {
  test("overview, usage page and CSV, GET /v1/account/spend and the wallet page and CSV agree to the micro-unit", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(caseArb, { minLength: 4, maxLength: 12 }), async (cases) => {
        const { t, accounts, now } = await runCases(cases);
        const { ctx } = t;
        const handle = (path: string, init: RequestInit = {}) =>
          t.app.handle(new Request(`${ORIGIN}${path}`, { redirect: "manual", ...init }));
        // Enough entries that the wallet page has an "Older" page.
        for (let n = 0; n < 55; n++) await ctx.ledger.topUp(accounts[0]!.id, 1n, `tick ${n}`);
        for (const [i, a] of accounts.entries()) {
          const key = a.keys[0]!;
          // An owner of this account, signed in now (sessions count from the same injected clock).
          const email = `owner${i}@example.com`;
          const { url } = await ctx.people.invites.createInvite({ email, accountId: a.id, role: "owner" });
          const accepted = await ctx.people.signIn.acceptInvite(url.split("/").pop()!, PASSWORD, CLIENT);
          // The session's cookie as sign-in sets it (its Max-Age is counted from the real clock,
          // which this test's injected clock is far from, so the cookie is set here directly).
          const b = new Browser(handle);
          b.cookie = accepted.session.token;
          const page = async (path: string) => {
            const r = await b.page(path);
            expect(r.status, path).toBe(200);
            return r.text;
          };
          const spendOf = async (month: string) =>
            json<Spend>(await t.request(`/v1/account/spend?month=${month}`, { key }));
          const month = monthOf(now());
          const current = await spendOf(month);
          const account = await json<Record<string, string>>(await t.request("/v1/account", { key }));

          // Overview: balance figures = GET /v1/account; this month = GET /v1/account/spend, per key and model.
          const overview = await page("/console");
          expect(figure(overview, "balance")).toBe(BigInt(account.balance_micro!));
          expect(figure(overview, "held")).toBe(BigInt(account.held_micro!));
          expect(figure(overview, "available")).toBe(BigInt(account.available_micro!));
          expect(figure(overview, "month-spent")).toBe(BigInt(current.total_micro));
          expect(figure(overview, "month-spent")).toBe(BigInt(account.month_spent_micro!));
          const keyRows = rows(table(overview, "key-spend"), "key");
          for (const k of current.by_key) {
            expect(values(keyRows.get(k.key_id) ?? '<data value="0">')[0]).toBe(BigInt(k.spent_micro));
          }
          const keySum = [...keyRows.values()].reduce((s, r) => s + values(r)[0]!, 0n);
          expect(keySum).toBe(BigInt(current.total_micro));
          const modelRows = current.by_model.length
            ? rows(table(overview, "model-spend"), "model")
            : new Map();
          expect(new Map([...modelRows].map(([id, r]) => [id, values(r)[0]!]))).toEqual(
            new Map(current.by_model.map((m) => [m.model_id, BigInt(m.spent_micro)])),
          );

          // Usage per month (12 months), by model and by key: each month's total = the API's.
          const usageCsv = csvObjects(await (await b.get("/console/usage.csv?period=month")).text());
          const csvByMonth = sumBy(
            usageCsv,
            (r) => r.month!,
            (r) => BigInt(r.amount_micro!),
          );
          for (const by of ["model", "key"]) {
            const usagePage = await page(`/console/usage?period=month&by=${by}`);
            const monthRows = rows(table(usagePage, "usage-table"), "period");
            expect(monthRows.size).toBe(12);
            let total = 0n;
            for (const [m, r] of monthRows) {
              const v = values(r);
              const rowTotal = v.at(-1)!;
              expect(v.slice(0, -1).reduce((s, x) => s + x, 0n)).toBe(rowTotal);
              const api = await spendOf(m);
              expect(rowTotal, `${by} ${m}`).toBe(BigInt(api.total_micro));
              expect(csvByMonth.get(m) ?? 0n).toBe(rowTotal);
              total += rowTotal;
            }
            expect(figure(usagePage, "usage-total")).toBe(total);
            // The per-key (or per-model) totals of the range: the CSV's, summed the same way.
            const summary =
              total > 0n ? rows(table(usagePage, "usage-summary"), by) : new Map<string, string>();
            const fromCsv = sumBy(
              usageCsv,
              (r) => (by === "model" ? r.model_id! : r.key_id!),
              (r) => BigInt(r.amount_micro!),
            );
            expect(new Map([...summary].map(([id, r]) => [id, values(r).at(-1)!]))).toEqual(fromCsv);
          }
          // This month's row of the per-month page is the overview's figure.
          const byMonth = rows(table(await page("/console/usage?period=month"), "usage-table"), "period");
          expect(values(byMonth.get(month)!).at(-1)).toBe(BigInt(current.total_micro));

          // Usage per day (30 days): page rows = the day CSV's rows.
          const dayPage = await page("/console/usage?period=day&by=key");
          const dayCsv = csvObjects(await (await b.get("/console/usage.csv?period=day")).text());
          const csvByDay = sumBy(
            dayCsv,
            (r) => r.date!,
            (r) => BigInt(r.amount_micro!),
          );
          const dayRows = rows(table(dayPage, "usage-table"), "period");
          expect(dayRows.size).toBe(30);
          for (const [d, r] of dayRows) expect(values(r).at(-1)).toBe(csvByDay.get(d) ?? 0n);

          // The wallet: every page ("Older" links), its charges per month = the API's spend; the
          // first entry's running balance is the balance; the CSV has the same entries.
          const entries: { id: string; month: string; kind: string; delta: bigint; after: bigint }[] = [];
          let next: string | null = "/console/wallet/entries";
          while (next) {
            const w = await page(next);
            for (const [id, r] of rows(w, "entry")) {
              const cells = [...r.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => m[1]!);
              const delta = values(cells[3]!)[0] ?? 0n;
              entries.push({
                id,
                month: /datetime="(\d{4}-\d{2})/.exec(cells[0]!)![1]!,
                kind: cells[1]!,
                delta,
                after: values(cells[5]!)[0]!,
              });
            }
            next =
              /href="(\/console\/wallet\/entries\?cursor=\d+)" rel="next">Older/
                .exec(w)?.[1]
                ?.replaceAll("&amp;", "&") ?? null;
          }
          seen.entries = Math.max(seen.entries, entries.length);
          expect(entries[0]!.after).toBe(BigInt(account.balance_micro!));
          const walletCsv = csvObjects(await (await b.get("/console/wallet.csv")).text());
          expect(walletCsv.map((r) => r.id)).toEqual(entries.map((e) => e.id));
          expect(walletCsv.map((r) => BigInt(r.balance_after_micro!))).toEqual(entries.map((e) => e.after));
          // Running balance: each entry's balance after = the older one's + its change.
          for (let j = 0; j + 1 < entries.length; j++) {
            expect(entries[j + 1]!.after + entries[j]!.delta).toBe(entries[j]!.after);
          }
          const charges = sumBy(
            entries.filter((e) => e.kind === "charge"),
            (e) => e.month,
            (e) => -e.delta,
          );
          seen.months = Math.max(seen.months, charges.size);
          for (const [m, v] of charges) expect(BigInt((await spendOf(m)).total_micro)).toBe(v);
          if (i === 1) seen.rubCharges += charges.size;

          // The statement (issue 34), every page: one row per job (one per hold entry) and per
          // credit, every entry under exactly one row, each row's balance after the older row's
          // plus its amount, the newest the balance.
          const statement: { status: string; amount: bigint; after: bigint; entries: string[] }[] = [];
          let more: string | null = "/console/wallet";
          while (more) {
            const w = await page(more);
            for (const m of w.matchAll(/<tr data-row="\d+" data-status="(\w+)">([\s\S]*?)<\/tr>/g)) {
              statement.push({
                status: m[1]!,
                amount: BigInt(/data-amount="(-?\d+)"/.exec(m[2]!)![1]!),
                after: BigInt(/data-balance-after><data value="(\d+)">/.exec(m[2]!)![1]!),
                entries: [...m[2]!.matchAll(/<li data-entry="(\d+)">/g)].map((e) => e[1]!),
              });
            }
            more = /href="(\/console\/wallet\?cursor=\d+)" rel="next">Older/.exec(w)?.[1] ?? null;
          }
          expect(statement[0]!.after).toBe(BigInt(account.balance_micro!));
          for (let j = 0; j + 1 < statement.length; j++) {
            expect(statement[j + 1]!.after + statement[j]!.amount).toBe(statement[j]!.after);
          }
          expect(statement.flatMap((r) => r.entries).sort()).toEqual(entries.map((e) => e.id).sort());
          const jobs = statement.filter((r) => r.status !== "topup" && r.status !== "adjustment");
          expect(jobs).toHaveLength(entries.filter((e) => e.kind === "hold").length);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(seen.rubCharges).toBeGreaterThan(0);
    expect(seen.months).toBeGreaterThanOrEqual(2);
    expect(seen.entries).toBeGreaterThan(50); // paging was exercised
  }, 180_000);
});
