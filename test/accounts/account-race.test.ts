import { afterEach, describe, expect, test } from "bun:test";
import { AccountStore } from "../../src/accounts/store.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { dialects, openTestSql, type TestSql } from "../helpers/postgres.ts";

// Two creations of one account name at once (the admin API, the CLI, two sign-ups whose emails
// give the same name): one account, the other the conflict an existing name gets, never a 500.

let opened: TestSql | null = null;
afterEach(async () => {
  await opened?.close();
  opened = null;
});

describe.each(dialects())("account name race on %s", (dialect) => {
  test("concurrent creations of one name: one account, the others a conflict", async () => {
    opened = await openTestSql(dialect, { migrated: true });
    const accounts = new AccountStore(opened.sql);
    const results = await Promise.all(
      Array.from({ length: 4 }, () =>
        accounts.createAccount("acme", "USD").then(
          () => "ok",
          (err: unknown) => (err instanceof DomainError ? `${err.code}:${err.param}` : String(err)),
        ),
      ),
    );
    expect(results.sort()).toEqual(["conflict:name", "conflict:name", "conflict:name", "ok"]);
    expect(await accounts.countAccounts()).toBe(1);
  });
});
