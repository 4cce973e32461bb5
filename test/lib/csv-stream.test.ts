// Streamed CSV exports (issue 36): the same bytes as toCsv, a page read only when the client takes
// the previous one, and the reads stopped when the client goes away.
import { describe, expect, test } from "bun:test";
import { type CsvValue, csvStream, inPages, keysetPages, mapPages, toCsv } from "../../src/lib/csv.ts";
import { csvText } from "../helpers/csv.ts";

/** A keyset source over `total` numbered rows, newest first, counting its reads and noting its close. */
function source(total: number, size: number) {
  const seen = { reads: 0, closed: false };
  const read = async (before: number | null) => {
    seen.reads++;
    const top = before ?? total;
    const rows = Array.from({ length: Math.min(size, top) }, (_, i) => top - i);
    return { rows, next: top - rows.length > 0 ? top - rows.length : null };
  };
  async function* pages() {
    try {
      yield* keysetPages(read);
    } finally {
      seen.closed = true;
    }
  }
  return { seen, pages };
}

const record = (n: number): CsvValue[] => [n, `row, "${n}"`, n % 2 ? "=1+1" : null];
const header = ["n", "text", "formula"];

describe("csvStream", () => {
  test("several pages stream to exactly toCsv's bytes", async () => {
    const { seen, pages } = source(2_500, 1_000);
    const text = await csvText(csvStream(header, mapPages(pages(), record)));
    const all = Array.from({ length: 2_500 }, (_, i) => record(2_500 - i));
    expect(text).toBe(toCsv(header, all));
    expect(seen.reads).toBe(3);
  });

  test("no rows is the header alone; empty pages in between are skipped", async () => {
    expect(await csvText(csvStream(header, []))).toBe(toCsv(header, []));
    const gaps = [[], [record(1)], [], [], [record(2)], []];
    expect(await csvText(csvStream(header, gaps))).toBe(toCsv(header, [record(1), record(2)]));
  });

  test("rows in memory go out in pages of the given size, the same bytes", async () => {
    const rows = Array.from({ length: 25 }, (_, i) => record(i));
    expect([...inPages(rows, 10)].map((p) => p.length)).toEqual([10, 10, 5]);
    expect(await csvText(csvStream(header, inPages(rows, 10)))).toBe(toCsv(header, rows));
  });

  test("the header is out before any page is read, and a page is read only when the last was taken", async () => {
    const { seen, pages } = source(10_000, 1_000);
    const reader = csvStream(header, mapPages(pages(), record)).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("n,text,formula\r\n");
    await Bun.sleep(20);
    // The queue holds one chunk ahead at most: a page or two read, not the 10 of the whole file.
    expect(seen.reads).toBeLessThanOrEqual(2);
    await reader.read();
    await Bun.sleep(20);
    expect(seen.reads).toBeLessThanOrEqual(3);
    await reader.cancel();
  });

  test("a client that goes away midway stops the reads and closes the source", async () => {
    const { seen, pages } = source(10_000, 1_000);
    const reader = csvStream(header, mapPages(pages(), record)).getReader();
    await reader.read();
    await reader.read();
    await reader.cancel();
    const reads = seen.reads;
    await Bun.sleep(20);
    expect(seen.closed).toBe(true);
    expect(seen.reads).toBe(reads);
    expect(reads).toBeLessThan(10);
  });

  test("other tasks run between pages (a timer fires while a long file streams)", async () => {
    const { pages } = source(20_000, 1_000);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    await csvText(csvStream(header, mapPages(pages(), record)));
    clearInterval(timer);
    // 20 pages, each followed by a turn of the event loop: the timer got in between them.
    expect(ticks).toBeGreaterThan(0);
  });
});
