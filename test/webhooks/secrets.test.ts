import { describe, expect, test } from "bun:test";
import { AccountStore } from "../../src/accounts/store.ts";
import { WebhookSecretStore } from "../../src/webhooks/secret-store.ts";
import { secretKey } from "../../src/webhooks/signing.ts";
import { sqlOf } from "../helpers/sql.ts";
import { webhookDb } from "./helpers.ts";

describe("WebhookSecretStore", () => {
  test("get creates a whsec_ secret on first use and returns the same one after", async () => {
    const { db, accountId } = await webhookDb();
    const store = new WebhookSecretStore(sqlOf(db));
    const first = await store.get(accountId);
    expect(first).toMatch(/^whsec_/);
    expect(secretKey(first).length).toBe(32);
    expect(await store.get(accountId)).toBe(first);
    // Another store over the same database (another process) sees the same secret.
    expect(await new WebhookSecretStore(sqlOf(db)).get(accountId)).toBe(first);
  });

  test("accounts have different secrets", async () => {
    const { db, accountId } = await webhookDb();
    const other = (await new AccountStore(sqlOf(db)).createAccount("second", "USD")).account.id;
    const store = new WebhookSecretStore(sqlOf(db));
    expect(await store.get(accountId)).not.toBe(await store.get(other));
  });

  test("rotate replaces the secret; the old one keeps signing only during the overlap", async () => {
    const { db, accountId } = await webhookDb();
    let now = 1_000_000;
    const store = new WebhookSecretStore(sqlOf(db), { now: () => now, rotationOverlapMs: 1000 });
    const old = await store.get(accountId);
    expect(await store.signingSecrets(accountId)).toEqual([old]);
    const fresh = await store.rotate(accountId);
    expect(fresh).not.toBe(old);
    expect(await store.get(accountId)).toBe(fresh);
    expect(await store.signingSecrets(accountId)).toEqual([fresh, old]);
    now += 999;
    expect(await store.signingSecrets(accountId)).toEqual([fresh, old]);
    now += 1;
    expect(await store.signingSecrets(accountId)).toEqual([fresh]);
  });

  test("rotating before any read makes a secret without an overlap", async () => {
    const { db, accountId } = await webhookDb();
    const store = new WebhookSecretStore(sqlOf(db));
    const fresh = await store.rotate(accountId);
    expect(await store.signingSecrets(accountId)).toEqual([fresh]);
  });

  test("an unknown account cannot get a secret (foreign key)", async () => {
    const { db } = await webhookDb();
    await expect(
      (async () => await new WebhookSecretStore(sqlOf(db)).get("acct_doesnotexist0000"))(),
    ).rejects.toThrow();
  });
});
