/**
 * CSV files for spreadsheets (RFC 4180): fields separated by commas, records by CRLF, a field
 * quoted when it holds a comma, a quote, CR or LF, quotes doubled inside it. Formula-injection
 * safe: a text cell starting with = + - @ (or a tab or CR, which some spreadsheets skip before
 * reading a formula) gets a leading ' so a spreadsheet shows it as text instead of evaluating it.
 * Numbers (bigint, number, and text that is exactly a decimal number such as "-1.50") are
 * written as they are: a negative amount stays a number, and a number cannot be a formula.
 */
import { lowPriorityTurn } from "./low-priority.ts";

export type CsvValue = string | bigint | number | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;
const DECIMAL = /^-?\d+(\.\d+)?$/;

/** One cell: numbers as digits, null/undefined as empty, text neutralised and quoted as needed. */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "bigint" || typeof value === "number") return String(value);
  if (DECIMAL.test(value)) return value;
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A whole file: the header row, then one record per row, each ended by CRLF. */
export function toCsv(header: readonly string[], rows: Iterable<readonly CsvValue[]>): string {
  const lines = [header.map(csvCell).join(",")];
  for (const row of rows) lines.push(row.map(csvCell).join(","));
  return `${lines.join("\r\n")}\r\n`;
}

/** A page of a keyset read: its rows and the cursor of the next page (null on the last page). */
export interface KeysetPage<R, C> {
  rows: R[];
  next: C | null;
}

/**
 * Every page of a keyset read, in order: `read(null)` first, then `read(next)` until `next` is
 * null. A generator, so a consumer that stops (a CSV download cancelled midway) stops the reads.
 */
export async function* keysetPages<R, C>(
  read: (cursor: C | null) => Promise<KeysetPage<R, C>>,
): AsyncGenerator<R[]> {
  let cursor: C | null = null;
  do {
    const page: KeysetPage<R, C> = await read(cursor);
    if (page.rows.length > 0) yield page.rows;
    cursor = page.next;
  } while (cursor !== null);
}

/** The rows of an export already in memory (bounded by its range), in pages like a keyset read's. */
export function* inPages<R>(rows: readonly R[], size = CSV_PAGE_ROWS): Generator<R[]> {
  for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size);
}

/** Each page's rows made CSV records; closing the result closes `pages` (a cancelled download). */
export async function* mapPages<R>(
  pages: AsyncIterable<R[]> | Iterable<R[]>,
  record: (row: R) => CsvValue[],
): AsyncGenerator<CsvValue[][]> {
  for await (const rows of pages) yield rows.map(record);
}

/** Rows read per page of a streamed export: ~150 KB of CSV, about 2 ms of reads on SQLite. */
export const CSV_PAGE_ROWS = 1000;

/**
 * A whole file as a stream: the header at once, then each page of records as one chunk, read only
 * when the client has taken the previous one (the stream's back-pressure: memory holds a page or
 * two, not the history), with a turn of the event loop between pages so other requests run first
 * (a bun:sqlite read never yields; `lowPriorityTurn`: the API's waiting work before each page). The
 * bytes are exactly `toCsv(header, every row)`'s. When the client goes away the stream is
 * cancelled and the page source is closed (`return()`), so no further page is read.
 */
export function csvStream(
  header: readonly string[],
  pages: AsyncIterable<readonly (readonly CsvValue[])[]> | Iterable<readonly (readonly CsvValue[])[]>,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const it = (async function* () {
    yield* pages;
  })();
  let first = true;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controller.enqueue(encoder.encode(`${header.map(csvCell).join(",")}\r\n`));
      },
      async pull(controller) {
        if (!first) await lowPriorityTurn();
        first = false;
        // A pull that enqueues nothing is not called again: skip empty pages until rows or the end.
        let text = "";
        while (text === "") {
          const next = await it.next();
          if (next.done) {
            controller.close();
            return;
          }
          for (const row of next.value) text += `${row.map(csvCell).join(",")}\r\n`;
        }
        controller.enqueue(encoder.encode(text));
      },
      async cancel() {
        await it.return(undefined);
      },
    },
    // One chunk queued ahead at most: the next page is read when the client took this one.
    { highWaterMark: 1 },
  );
}
