import { afterEach, describe, expect, test } from "bun:test";
import { AccountStore, KEYS_SCOPE } from "../../src/accounts/store.ts";
import { CacheInvalidation } from "../../src/db/invalidation.ts";
import { type Instances, openInstances } from "../helpers/instances.ts";
import { dialects } from "../helpers/postgres.ts";

// The principals cache of AccountStore across instances (docs/scale-out.md: "a revoked key or a changed
// limit takes effect on every instance within 1 second"). Two instances on one database, each its
// own Sql, bus, CacheInvalidation and AccountStore; the CLI is a store whose invalidation is not
// started. Each check asks the other instance at the first request after 1 s has passed.

const CONTRACT_MS = 1_000;

interface Node {
  accounts: AccountStore;
  invalidation: CacheInvalidation;
}

let open: Instances | null = null;
const started: CacheInvalidation[] = [];

afterEach(async () => {
  for (const inv of started.splice(0)) await inv.stop();
  await open?.close();
  open = null;
});

async function nodes(dialect: "sqlite" | "postgres", count: number): Promise<Node[]> {
  open = await openInstances(dialect, count);
  const out: Node[] = [];
  for (const { sql, bus } of open.list) {
    const invalidation = new CacheInvalidation(sql, bus);
    await invalidation.start();
    started.push(invalidation);
    out.push({ accounts: new AccountStore(sql, invalidation), invalidation });
  }
  return out;
}

describe.each(dialects())("the key cache across instances on %s", (dialect) => {
  test("a key revoked on A is refused on B at the first request after 1 s", async () => {
    const [a, b] = await nodes(dialect, 2);
    const { keyId, key } = await a!.accounts.createAccount("acme", "USD");
    // A second manage key, so the first can be revoked by the account itself.
    await a!.accounts.createKey((await a!.accounts.findKey(keyId))!.account_id, { canManage: true });
    expect((await b!.accounts.authenticate(key))?.keyId).toBe(keyId); // now cached on B
    expect((await b!.accounts.authenticate(key))?.keyId).toBe(keyId);
    const accountId = (await a!.accounts.findKey(keyId))!.account_id;
    await a!.accounts.revokeKey(accountId, keyId);
    expect(await a!.accounts.authenticate(key)).toBeNull(); // at once where it was revoked
    await Bun.sleep(CONTRACT_MS);
    expect(await b!.accounts.authenticate(key)).toBeNull();
  });

  test("a changed limit applies on B at the first request after 1 s", async () => {
    const [a, b] = await nodes(dialect, 2);
    const { account, keyId, key } = await a!.accounts.createAccount("acme", "USD");
    expect((await b!.accounts.authenticate(key))?.maxInFlight).toBeNull();
    await a!.accounts.updateKey(account.id, keyId, {
      monthlyLimitMicro: 5_000_000n,
      writesPerMinute: 7,
      maxInFlight: 2,
    });
    await Bun.sleep(CONTRACT_MS);
    const seen = await b!.accounts.authenticate(key);
    expect(seen).toMatchObject({ monthlyLimitMicro: 5_000_000n, writesPerMinute: 7, maxInFlight: 2 });
  });

  test("a revocation by the operator CLI (invalidation never started) reaches both instances", async () => {
    const [a, b] = await nodes(dialect, 2);
    const { keyId, key } = await a!.accounts.createAccount("acme", "USD");
    expect(await a!.accounts.authenticate(key)).not.toBeNull();
    expect(await b!.accounts.authenticate(key)).not.toBeNull();
    const cliInstance = await open!.add();
    const cli = new AccountStore(cliInstance.sql, new CacheInvalidation(cliInstance.sql, cliInstance.bus));
    await cli.revokeKeyAsOperator(keyId);
    await Bun.sleep(CONTRACT_MS);
    expect(await a!.accounts.authenticate(key)).toBeNull();
    expect(await b!.accounts.authenticate(key)).toBeNull();
  });

  test("every key change bumps scope keys once; a rolled-back one bumps nothing", async () => {
    const [a] = await nodes(dialect, 1);
    const version = async () => {
      await a!.invalidation.check();
      return a!.invalidation.version(KEYS_SCOPE);
    };
    const v0 = await version();
    const { account, keyId } = await a!.accounts.createAccount("acme", "USD");
    const other = await a!.accounts.createKey(account.id, { canManage: true });
    await a!.accounts.updateKey(account.id, other.keyId, { maxInFlight: 3 });
    await a!.accounts.revokeKey(account.id, keyId);
    await a!.accounts.revokeKeyAsOperator(other.keyId);
    expect(await version()).toBe(v0 + 5n);
    // Refused inside the change: the transaction (and its bump) rolls back.
    await expect(a!.accounts.updateKey(account.id, keyId, { maxInFlight: 1 })).rejects.toThrow(/revoked/);
    await expect(a!.accounts.createAccount("acme", "USD")).rejects.toThrow(/already exists/);
    expect(await version()).toBe(v0 + 5n);
  });

  test("a key created inside a caller's transaction is announced by the poll after its commit", async () => {
    const [a, b] = await nodes(dialect, 2);
    const seen: bigint[] = [];
    b!.invalidation.watch(KEYS_SCOPE, () => seen.push(b!.invalidation.version(KEYS_SCOPE)));
    const before = a!.invalidation.version(KEYS_SCOPE);
    const sql = open!.list[0]!.sql;
    let made: { key: string } | null = null;
    await sql.tx(async (tx) => {
      made = await a!.accounts.in(tx).createAccount("acme", "USD");
    });
    await Bun.sleep(CONTRACT_MS);
    expect(seen.length).toBe(1);
    expect(a!.invalidation.version(KEYS_SCOPE)).toBe(before + 1n);
    expect(await b!.accounts.authenticate(made!.key)).not.toBeNull();
  });
});

describe.each(dialects().filter((d) => d === "postgres"))("without invalidation on %s", (dialect) => {
  test("another instance keeps serving a revoked key from its cache (what the scope fixes)", async () => {
    const [a] = await nodes(dialect, 1);
    const plain = await open!.add();
    const b = new AccountStore(plain.sql); // no invalidation: the 5 s cache is all it has
    const { keyId, key } = await a!.accounts.createAccount("acme", "USD");
    expect(await b.authenticate(key)).not.toBeNull();
    await a!.accounts.revokeKeyAsOperator(keyId);
    await Bun.sleep(CONTRACT_MS);
    expect(await b.authenticate(key)).not.toBeNull();
  });
});
