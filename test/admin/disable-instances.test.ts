/**
 * An account disabled on one instance is refused on every other from the next request on (the key
 * cache is dropped through scope "keys", as for a disabled key; docs/scale-out.md): two apps on one
 * database, the account disabled through A, B's first request after it; enabled through B, A's.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { disableAccount, enableAccount } from "../../src/admin/operations.ts";
import { openAppInstances } from "../helpers/app-instances.ts";
import { dialects } from "../helpers/postgres.ts";

const CONTRACT_MS = 1_000;
/**
 * SQLite: an instance reads data_version once per event-loop iteration (AccountStore
 * forgetIfChangedElsewhere), since a request from a socket always arrives in a later iteration than
 * a commit it follows. Here the change is a direct call that can finish in microtasks of the same
 * iteration as B's earlier request, so the next request is sent from the next iteration, as a
 * client's would be (without it the test failed once in 5 runs while CI ran beside it).
 */
const nextIteration = () => new Promise<void>((resolve) => setImmediate(resolve));
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

describe.each(dialects())("a disabled account across instances on %s", (dialect) => {
  test("disabled on A: B refuses its key (cached before); enabled on B: A accepts it", async () => {
    const apps = await openAppInstances(dialect);
    closers.push(() => apps.close());
    const a = apps.first;
    const b = await apps.add();
    const estimate = (on: typeof a) =>
      on.request("/v1/estimate", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model_id: "sandbox/image" }),
      });
    // Cached on both before the change.
    expect((await estimate(a)).status).toBe(200);
    expect((await estimate(b)).status).toBe(200);
    await disableAccount(a.ctx, apps.accountId, "chargeback");
    await (dialect === "postgres" ? Bun.sleep(CONTRACT_MS) : nextIteration());
    const refused = await estimate(b);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      "account is disabled",
    );
    expect((await estimate(a)).status).toBe(401);
    await enableAccount(b.ctx, apps.accountId);
    await (dialect === "postgres" ? Bun.sleep(CONTRACT_MS) : nextIteration());
    expect((await estimate(a)).status).toBe(200);
    expect((await estimate(b)).status).toBe(200);
  });
});
