// The INSERT batches of migrate-data are bounded in bytes as well as rows.
import { describe, expect, test } from "bun:test";
import { bySize } from "../../src/backup/migrate-rows.ts";

describe("bySize", () => {
  const mb = (n: number) => "x".repeat(n * 1024 * 1024);
  test("rows are cut into runs of at most 4 MiB of text and blobs, each row once, in order", () => {
    const rows = [
      { id: 1n, t: mb(3) },
      { id: 2n, t: mb(2) },
      { id: 3n, t: "small", b: new Uint8Array(1024 * 1024) },
      { id: 4n, t: mb(5) }, // larger than the bound: a run of its own, and the next row starts another
      { id: 5n, t: null },
    ];
    const runs = [...bySize(rows, ["id", "t", "b"])].map((r) => r.map((x) => x.id));
    expect(runs).toEqual([[1n], [2n, 3n], [4n], [5n]]);
  });
  test("small rows stay in one run; no rows, no run", () => {
    const rows = Array.from({ length: 1000 }, (_, i) => ({ id: BigInt(i), t: "a row" }));
    expect([...bySize(rows, ["id", "t"])].map((r) => r.length)).toEqual([1000]);
    expect([...bySize([], ["id"])]).toEqual([]);
  });
});
