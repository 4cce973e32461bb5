import { afterEach, describe, expect, test } from "bun:test";
import { AccountStore } from "../../src/accounts/store.ts";
import type { Sql } from "../../src/db/sql.ts";
import { type Instances, openInstances } from "../helpers/instances.ts";

// The principals cache on SQLite follows other processes' key changes (the operator CLI) through
// `PRAGMA data_version`, read once per event-loop iteration and shared by every authentication of
// that iteration (src/accounts/store.ts, forgetIfChangedElsewhere). Two connections on one file:
// "cli" changes keys, "server" authenticates through a Sql that counts the pragma.

let open: Instances | null = null;
afterEach(async () => {
  await open?.close();
  open = null;
});

/** `sql` with a count of the data_version reads made through it. */
function counting(sql: Sql): { sql: Sql; reads: () => number } {
  let n = 0;
  const wrapped = new Proxy(sql, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === "get")
        return (query: string, params?: never) => {
          if (query.includes("data_version")) n++;
          return target.get(query, params);
        };
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { sql: wrapped, reads: () => n };
}

const nextIteration = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("the key cache and other processes' changes (SQLite)", () => {
  test("authentications in one event-loop iteration share one data_version read", async () => {
    open = await openInstances("sqlite", 2);
    const cli = new AccountStore(open.list[0]!.sql);
    const counted = counting(open.list[1]!.sql);
    const server = new AccountStore(counted.sql);
    const { key, keyId } = await cli.createAccount("acme", "USD");
    await nextIteration();
    const before = counted.reads();
    const all = await Promise.all(Array.from({ length: 20 }, () => server.authenticate(key)));
    expect(all.every((p) => p?.keyId === keyId)).toBe(true);
    expect(counted.reads() - before).toBe(1);
    // The next iteration reads again.
    await nextIteration();
    await server.authenticate(key);
    expect(counted.reads() - before).toBe(2);
  });

  test("a key revoked by another connection is refused in the next iteration, not after the cache's time", async () => {
    open = await openInstances("sqlite", 2);
    const cli = new AccountStore(open.list[0]!.sql);
    const server = new AccountStore(open.list[1]!.sql);
    const { key, keyId } = await cli.createAccount("acme", "USD");
    await cli.createKey((await cli.findKey(keyId))!.account_id, { canManage: true });
    expect((await server.authenticate(key))?.keyId).toBe(keyId); // cached now
    expect((await server.authenticate(key))?.keyId).toBe(keyId);
    await cli.revokeKeyAsOperator(keyId);
    await nextIteration();
    expect(await server.authenticate(key)).toBeNull();
  });

  test("a revocation committed while this iteration's read is pending is not missed by later iterations", async () => {
    open = await openInstances("sqlite", 2);
    const cli = new AccountStore(open.list[0]!.sql);
    const server = new AccountStore(open.list[1]!.sql);
    const { key, keyId } = await cli.createAccount("acme", "USD");
    await cli.createKey((await cli.findKey(keyId))!.account_id, { canManage: true });
    const first = server.authenticate(key); // starts this iteration's shared read
    await cli.revokeKeyAsOperator(keyId); // commits after that read was taken
    expect((await first)?.keyId).toBe(keyId); // concurrent with the revocation: either is right
    await nextIteration();
    expect(await server.authenticate(key)).toBeNull();
  });
});
