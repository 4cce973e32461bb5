import { describe, expect, test } from "bun:test";
import { ID_PATTERN, newId, newTimeOrderedId, randomBase62, UUID_PATTERN } from "../../src/lib/ids.ts";

describe("ids", () => {
  test("random ids are prefixed, base62, of the asked length and distinct", () => {
    const ids = new Set(Array.from({ length: 2000 }, () => newId("acct")));
    expect(ids.size).toBe(2000);
    for (const id of ids) expect(id).toMatch(/^acct_[0-9A-Za-z]{20}$/);
    expect(randomBase62(7)).toHaveLength(7);
  });

  test("time-ordered ids sort by creation time, then stay distinct within one millisecond", () => {
    const t0 = Date.UTC(2026, 10, 21, 12, 0, 0);
    const times = [t0, t0 + 1, t0 + 61, t0 + 62, t0 + 3_844, t0 + 86_400_000, 2 ** 45];
    const ids = times.map((t) => newTimeOrderedId("hold", t));
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids) expect(id).toMatch(ID_PATTERN);
    for (const id of ids) expect(id).toHaveLength("hold_".length + 20);
    const same = new Set(Array.from({ length: 1000 }, () => newTimeOrderedId("hold", t0)));
    expect(same.size).toBe(1000);
    for (const id of same) expect(id.slice(0, 13)).toBe(ids[0]!.slice(0, 13));
  });

  test("UUID_PATTERN accepts lowercase canonical UUIDs only", () => {
    expect(UUID_PATTERN.test(Bun.randomUUIDv7())).toBe(true);
    expect(UUID_PATTERN.test(crypto.randomUUID())).toBe(true);
    expect(UUID_PATTERN.test("0190A3B4-C5D6-7E8F-9A0B-1C2D3E4F5A6B")).toBe(false);
    expect(UUID_PATTERN.test(Bun.randomUUIDv7().replaceAll("-", ""))).toBe(false);
    expect(UUID_PATTERN.test(`${Bun.randomUUIDv7()}\n`)).toBe(false);
  });
});
