import { WALLET_CSV_HEADER } from "../../src/ledger/figures.ts";
import type { Wallet, WalletSource } from "../../src/ledger/wallet.ts";
import { toCsv } from "../../src/lib/csv.ts";
import { formatMicro } from "../../src/lib/money.ts";
import { rfc3339 } from "../../src/lib/time.ts";
/**
 * A strict RFC 4180 reader for tests (an independent check of src/lib/csv.ts): records end with
 * CRLF, fields may be quoted, quotes inside quoted fields are doubled. Throws on anything else.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    let field = "";
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error("unterminated quoted field");
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== "," && text[i] !== "\r" && text[i] !== "\n") {
        if (text[i] === '"') throw new Error(`bare quote at ${i}`);
        field += text[i++];
      }
    }
    record.push(field);
    if (text[i] === ",") {
      i++;
    } else if (text.startsWith("\r\n", i)) {
      records.push(record);
      record = [];
      i += 2;
    } else {
      throw new Error(`expected , or CRLF at ${i}`);
    }
  }
  if (record.length > 0) throw new Error("last record without CRLF");
  return records;
}

/** Records as objects keyed by the header row; every record must have the header's width. */
export function csvObjects(text: string): Record<string, string>[] {
  const [head, ...rows] = parseCsv(text);
  return rows.map((r) => {
    if (r.length !== head!.length) throw new Error(`record of ${r.length} fields, header of ${head!.length}`);
    return Object.fromEntries(r.map((v, i) => [head![i]!, v]));
  });
}

/** A streamed CSV export read to its end, as the text a client receives. */
export async function csvText(body: ReadableStream<Uint8Array> | Promise<ReadableStream<Uint8Array>>) {
  return await new Response(await body).text();
}

/**
 * The wallet's CSV as the code before issue 36 built it (every page read, then one toCsv string):
 * the streamed export must equal it byte for byte (wallet-csv-stream.test.ts), and
 * scripts/csv-export-figures.ts measures it against the stream.
 */
export async function formerWalletCsv(
  wallet: Pick<Wallet, "list">,
  accountId: string,
  currency: string,
  source: WalletSource | null = null,
): Promise<string> {
  const records: (string | bigint | null)[][] = [];
  let before: bigint | null = null;
  do {
    const page = await wallet.list(accountId, { limit: 1000, before, source });
    for (const e of page.rows) {
      records.push([
        String(e.id),
        rfc3339(e.created_at),
        e.kind,
        e.source,
        formatMicro(e.amount_micro),
        e.amount_micro,
        formatMicro(e.balance_delta_micro),
        e.balance_delta_micro,
        formatMicro(e.balance_after_micro),
        e.balance_after_micro,
        e.held_after_micro,
        e.key_id,
        e.model_id,
        e.request_id,
        e.reason,
        currency,
      ]);
    }
    before = page.next;
  } while (before !== null);
  return toCsv(WALLET_CSV_HEADER, records);
}
