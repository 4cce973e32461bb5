// The Wallet page as a statement (issue 34): one row per job whatever its state (held, charged in
// full or in part, charged nothing, released) and one per credit, each with its amount, its running
// balance and its ledger entries in a <details>; a source filter and paging; the entries view and
// the CSV answering as before.
import { describe, expect, test } from "bun:test";
import { csvObjects } from "../helpers/csv.ts";
import { consoleApp } from "./helpers.ts";

/** A funded account with a job in every state, a redeemed-code top-up and an adjustment. */
async function seeded() {
  const t = await consoleApp();
  const { ctx } = t;
  const id = t.account.id;
  await ctx.ledger.topUp(id, 10_000_000n, "welcome");
  await ctx.ledger.topUp(id, 2_000_000n, "redeem code rbatch_x", "TOPUP", "rcode_x");
  const job = async (request: string, quote: bigint, source: "API" | "STUDIO" = "API") =>
    await ctx.ledger.reserve({
      accountId: id,
      keyId: source === "API" ? t.keyId : null,
      modelId: "sandbox/image",
      requestId: request,
      source,
      quotedUsdMicro: quote,
    });
  await ctx.ledger.settle((await job("req_full", 500_000n)).id, 500_000n);
  await ctx.ledger.settle((await job("req_part", 500_000n, "STUDIO")).id, 120_000n);
  await ctx.ledger.settle((await job("req_zero", 300_000n)).id, 0n);
  await ctx.ledger.release((await job("req_failed", 400_000n)).id, "failed");
  await job("req_running", 250_000n);
  await ctx.ledger.adjust(id, -1_000_000n, "refund of order ord_1");
  await t.person("owner@example.com");
  const b = await t.signedIn("owner@example.com");
  return { t, ctx, b };
}

/** The statement's rows as [status, request or what, amount micro, balance after micro]. */
function rows(page: string) {
  return [...page.matchAll(/<tr data-row="(\d+)" data-status="(\w+)">([\s\S]*?)<\/tr>/g)].map((m) => {
    const body = m[3]!;
    return {
      id: m[1]!,
      status: m[2]!,
      what:
        /href="\/console\/requests\/([^"]+)"/.exec(body)?.[1] ?? /class="reason">([^<]*)</.exec(body)?.[1],
      amount: BigInt(/data-amount="(-?\d+)"/.exec(body)![1]!),
      after: BigInt(/data-balance-after><data value="(\d+)">/.exec(body)![1]!),
      entries: [...body.matchAll(/<li data-entry="(\d+)">/g)].map((e) => e[1]!),
      body,
    };
  });
}

describe("wallet statement", () => {
  test("one row per job in every state and per credit, newest first, with the running balance", async () => {
    const { t, ctx, b } = await seeded();
    const { status, text } = await b.page("/console/wallet");
    expect(status).toBe(200);
    const r = rows(text);
    expect(r.map((x) => [x.status, x.what, x.amount])).toEqual([
      ["adjustment", "Adjustment: refund of order ord_1", -1_000_000n],
      ["held", "req_running", 0n],
      ["released", "req_failed", 0n],
      ["charged", "req_zero", 0n],
      ["charged", "req_part", -120_000n],
      ["charged", "req_full", -500_000n],
      ["topup", "Redeem code: redeem code rbatch_x", 2_000_000n],
      ["topup", "Credit: welcome", 10_000_000n],
    ]);
    const account = (await ctx.accounts.getAccount(t.account.id))!;
    expect(r[0]!.after).toBe(account.balance_micro);
    for (let i = 0; i + 1 < r.length; i++) expect(r[i]!.after).toBe(r[i + 1]!.after + r[i]!.amount);
    expect(r.at(-1)!.after).toBe(10_000_000n);
    // The words: a running job is held, not spent; an ended one shows what it held and released.
    const by = (what: string) => r.find((x) => x.what === what)!.body;
    expect(by("req_running")).toContain('<data value="250000">0.25 USD</data> held');
    expect(by("req_running")).toContain("not spent yet");
    // Its row's balance is unchanged (11.38); what can be spent is less by the hold.
    expect(by("req_running")).toMatch(
      /data-balance-after><data value="11380000">11.38 USD<\/data><span class="hint"><data value="11130000">11.13 USD<\/data> available/,
    );
    expect(by("req_full")).not.toContain("available");
    expect(by("req_part")).toContain(
      'held <data value="500000">0.50 USD</data>, released <data value="380000">0.38 USD</data>',
    );
    expect(by("req_full")).toContain('held <data value="500000">0.50 USD</data>, none released');
    expect(by("req_zero")).toContain("Nothing charged");
    expect(by("req_failed")).toContain("Nothing charged");
    expect(by("req_failed")).toMatch(/>Released<\/span><span class="hint">failed</);
    expect(by("req_part")).toContain('<td data-label="Source">STUDIO</td>');
    expect(r.find((x) => x.what?.startsWith("Credit"))!.body).toContain(">Credit</span>");
    // Each row's entries are the ledger's: a job's hold, charge and release, a credit's one entry.
    const entries = (await ctx.wallet.entries(t.account.id, 100, null)).data;
    expect(r.flatMap((x) => x.entries).sort()).toEqual(entries.map((e) => e.id).sort());
    expect(r.find((x) => x.what === "req_part")!.entries).toHaveLength(3);
    expect(r.find((x) => x.what === "req_full")!.entries).toHaveLength(2);
    expect(r.find((x) => x.what === "req_running")!.entries).toHaveLength(1);
    expect(by("req_part")).toMatch(
      /<details class="entries"><summary>3 ledger entries<span class="visually-hidden"> of req_part<\/span><\/summary>/,
    );
  });

  test("a source filter, paging by Older and Newest, and an empty wallet", async () => {
    const { t, ctx, b } = await seeded();
    const studio = rows((await b.page("/console/wallet?source=STUDIO")).text);
    expect(studio.map((x) => x.what)).toEqual(["req_part"]);
    const admin = rows((await b.page("/console/wallet?source=ADMIN")).text);
    expect(admin.map((x) => x.status)).toEqual(["adjustment", "topup"]);
    for (let i = 0; i < 55; i++) await ctx.ledger.topUp(t.account.id, 1n, `n${i}`);
    const first = await b.page("/console/wallet");
    expect(rows(first.text)).toHaveLength(50);
    const older = /href="(\/console\/wallet\?cursor=\d+)" rel="next">Older/.exec(first.text)![1]!;
    const second = await b.page(older);
    expect(second.text).toContain('<a href="/console/wallet">Newest</a>');
    const ids = [...rows(first.text), ...rows(second.text)].map((x) => BigInt(x.id));
    expect(ids).toHaveLength(55 + 8);
    expect(new Set(ids).size).toBe(ids.length);
    expect(second.text).not.toContain('rel="next"');
    const filtered = await b.page("/console/wallet?source=ADMIN");
    expect(filtered.text).toMatch(/href="\/console\/wallet\?source=ADMIN&amp;cursor=\d+" rel="next">Older/);

    const empty = await consoleApp();
    await empty.person("new@example.com");
    const nb = await empty.signedIn("new@example.com");
    const none = await nb.page("/console/wallet");
    expect(none.status).toBe(200);
    expect(none.text).toContain("Nothing yet.");
  });

  test("bad filters and cursors are 400 on the page", async () => {
    const { b } = await seeded();
    for (const q of ["source=EVIL", "cursor=abc", "cursor=-5", `cursor=${"9".repeat(19)}`]) {
      expect((await b.get(`/console/wallet?${q}`)).status, q).toBe(400);
      expect((await b.get(`/console/wallet/entries?${q}`)).status, q).toBe(400);
    }
  });

  test("the entries view and the CSV answer as before, linked from the statement", async () => {
    const { t, ctx, b } = await seeded();
    const page = await b.page("/console/wallet");
    expect(page.text).toContain('<a href="/console/wallet/entries">All ledger entries</a>');
    expect(page.text).toContain('<a href="/console/wallet.csv" download>Download CSV</a>');
    const { status, text } = await b.page("/console/wallet/entries");
    expect(status).toBe(200);
    const ids = [...text.matchAll(/<tr data-entry="(\d+)">/g)].map((m) => m[1]!);
    const stored = (await ctx.wallet.entries(t.account.id, 100, null)).data;
    expect(ids).toEqual(stored.map((e) => e.id));
    expect(text).toContain('<a href="/console/wallet">Statement</a>');
    const csv = csvObjects(await (await b.get("/console/wallet.csv")).text());
    expect(csv.map((r) => r.id)).toEqual(ids);
    // Written out, not WALLET_CSV_HEADER: the columns are a contract this test pins.
    expect(Object.keys(csv[0]!)).toEqual([
      "id",
      "created_at",
      "kind",
      "source",
      "amount",
      "amount_micro",
      "balance_delta",
      "balance_delta_micro",
      "balance_after",
      "balance_after_micro",
      "held_after_micro",
      "key_id",
      "model_id",
      "request_id",
      "reason",
      "currency",
    ]);
  });
});
