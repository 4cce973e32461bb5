import { describe, expect, test } from "bun:test";
import { AccountStore } from "../../src/accounts/accounts.ts";
import { WebhookSecretStore } from "../../src/webhooks/secrets.ts";
import { secretKey } from "../../src/webhooks/signing.ts";
import { webhookDb } from "./helpers.ts";

describe("WebhookSecretStore", () => {
  test("get creates a whsec_ secret on first use and returns the same one after", () => {
    const { db, accountId } = webhookDb();
    const store = new WebhookSecretStore(db);
    const first = store.get(accountId);
    expect(first).toMatch(/^whsec_/);
    expect(secretKey(first).length).toBe(32);
    expect(store.get(accountId)).toBe(first);
    // Another store over the same database (another process) sees the same secret.
    expect(new WebhookSecretStore(db).get(accountId)).toBe(first);
  });

  test("accounts have different secrets", () => {
    const { db, accountId } = webhookDb();
    const other = new AccountStore(db).createAccount("second", "USD").account.id;
    const store = new WebhookSecretStore(db);
    expect(store.get(accountId)).not.toBe(store.get(other));
  });

  test("rotate replaces the secret; the old one keeps signing only during the overlap", () => {
    const { db, accountId } = webhookDb();
    let now = 1_000_000;
    const store = new WebhookSecretStore(db, { now: () => now, rotationOverlapMs: 1000 });
    const old = store.get(accountId);
    expect(store.signingSecrets(accountId)).toEqual([old]);
    const fresh = store.rotate(accountId);
    expect(fresh).not.toBe(old);
    expect(store.get(accountId)).toBe(fresh);
    expect(store.signingSecrets(accountId)).toEqual([fresh, old]);
    now += 999;
    expect(store.signingSecrets(accountId)).toEqual([fresh, old]);
    now += 1;
    expect(store.signingSecrets(accountId)).toEqual([fresh]);
  });

  test("rotating before any read makes a secret without an overlap", () => {
    const { db, accountId } = webhookDb();
    const store = new WebhookSecretStore(db);
    const fresh = store.rotate(accountId);
    expect(store.signingSecrets(accountId)).toEqual([fresh]);
  });

  test("an unknown account cannot get a secret (foreign key)", () => {
    const { db } = webhookDb();
    expect(() => new WebhookSecretStore(db).get("acct_doesnotexist0000")).toThrow();
  });
});
