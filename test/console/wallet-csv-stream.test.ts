// /console/wallet.csv streams (issue 36): a history several pages long gives exactly the bytes the
// former one-string export built, in keyset pages of the entries index; a client that goes away
// midway stops the reads.
import { describe, expect, test } from "bun:test";
import type { WalletSource } from "../../src/ledger/wallet.ts";
import { CSV_PAGE_ROWS } from "../../src/lib/csv.ts";
import { formerWalletCsv } from "../helpers/csv.ts";
import { consoleApp } from "./helpers.ts";

type App = Awaited<ReturnType<typeof consoleApp>>;

/** The former export of the test's account. */
async function formerWalletCsvOf(t: App, source: WalletSource | null): Promise<string> {
  return await formerWalletCsv(t.ctx.wallet, t.account.id, t.account.currency, source);
}

/** An account with 2,300 credits (reasons that need quoting and neutralising) and 60 jobs: 2,460 entries. */
async function longHistory() {
  const t = await consoleApp();
  const { ctx } = t;
  const id = t.account.id;
  for (let i = 0; i < 2_300; i++)
    await ctx.ledger.topUp(id, BigInt(1_000 + i), i % 7 ? `gift ${i}` : `=x, "${i}"`);
  for (let i = 0; i < 60; i++) {
    const hold = await ctx.ledger.reserve({
      accountId: id,
      keyId: t.keyId,
      modelId: "sandbox/image",
      requestId: `req_${i}`,
      source: "API",
      quotedUsdMicro: 1_000n,
    });
    if (i % 3) await ctx.ledger.settle(hold.id, 700n);
    else await ctx.ledger.release(hold.id, "failed");
  }
  await t.person("owner@example.com");
  const b = await t.signedIn("owner@example.com");
  return { t, b };
}

/** Counts the wallet's page reads from now on. */
function countReads(t: App) {
  const seen = { reads: 0 };
  const list = t.ctx.wallet.list.bind(t.ctx.wallet);
  t.ctx.wallet.list = async (...args) => {
    seen.reads++;
    return await list(...args);
  };
  return seen;
}

describe("wallet.csv streams", () => {
  test("a history of several pages is byte for byte the former export, for every source filter", async () => {
    const { t, b } = await longHistory();
    const seen = countReads(t);
    const res = await b.get("/console/wallet.csv");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    const text = await res.text();
    // 2,300 top-ups; 60 holds; 40 partial charges (a charge and a release each), 20 releases.
    expect(text.split("\r\n").length - 2).toBe(2_460);
    // Read CSV_PAGE_ROWS at a time (each read asks one more row to know whether a page follows).
    expect(seen.reads).toBe(Math.ceil(2_461 / CSV_PAGE_ROWS));
    expect(text).toBe(await formerWalletCsvOf(t, null));
    for (const source of ["API", "TOPUP", "ADMIN"] as const) {
      const one = await (await b.get(`/console/wallet.csv?source=${source}`)).text();
      expect(one).toBe(await formerWalletCsvOf(t, source));
    }
  });

  test("a client that goes away after the first page stops the reads", async () => {
    const { t, b } = await longHistory();
    const seen = countReads(t);
    const res = await b.get("/console/wallet.csv");
    const reader = res.body!.getReader();
    await reader.read(); // the header
    await reader.read(); // the first page
    await reader.cancel();
    const reads = seen.reads;
    await Bun.sleep(50);
    expect(seen.reads).toBe(reads);
    expect(reads).toBeLessThan(3);
  });
});
