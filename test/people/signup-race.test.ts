import { afterEach, describe, expect, test } from "bun:test";
import { createServices } from "../../src/app/services.ts";
import type { Dialect, Sql } from "../../src/db/sql.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { dialects, openTestSql, type TestSql } from "../helpers/postgres.ts";
import { CLIENT, PASSWORD, TEST_PASSWORD_COST } from "./helpers.ts";

// Two sign-ups with one email at the same time (docs/scale-out.md "Concurrency review"): one gets
// the person, the other the answer an existing email gets (unauthorized, the sign-in error), never
// a 500 from the unique index, on both backends.

let opened: TestSql | null = null;
afterEach(async () => {
  await opened?.close();
  opened = null;
});

async function fixture(dialect: Dialect) {
  opened = await openTestSql(dialect, { migrated: true });
  const services = createServices(opened.sql, "http://gengate.test", undefined, {
    console: () => ({ signup: "open", currency: "USD" }),
    passwordCost: TEST_PASSWORD_COST,
  });
  return { sql: opened.sql, people: services.people };
}

async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (err) {
    if (err instanceof DomainError) return err.code;
    throw err;
  }
}

async function peopleWith(sql: Sql, email: string): Promise<bigint> {
  return (await sql.get<{ n: bigint }>("SELECT count(*) AS n FROM people WHERE email = ?", [email]))!.n;
}

describe.each(dialects())("sign-up race on %s", (dialect) => {
  test("two sign-ups with one email at once: one person, the other gets the sign-in error", async () => {
    const { sql, people } = await fixture(dialect);
    const emails = Array.from({ length: 6 }, (_, i) => `race${i}@example.com`);
    const results = await Promise.all(
      emails.flatMap((email) => [
        outcome(people.signIn.signUp({ email, password: PASSWORD }, CLIENT)),
        outcome(people.signIn.signUp({ email, password: "another password 123" }, CLIENT)),
      ]),
    );
    for (let i = 0; i < emails.length; i++) {
      expect([results[2 * i], results[2 * i + 1]].sort()).toEqual(["ok", "unauthorized"]);
      expect(await peopleWith(sql, emails[i]!)).toBe(1n);
    }
  });

  test("a sign-up whose insert meets a person committed after its re-read gets the sign-in error", async () => {
    const { sql, people } = await fixture(dialect);
    const email = "late@example.com";
    // Another sign-up's transaction: its person row is written but not committed yet, so the
    // sign-up below sees no such email (before and inside its transaction) and its insert waits.
    let commit: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      commit = resolve;
    });
    let inserted: () => void = () => {};
    const written = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    const other = sql.tx(async (tx) => {
      await tx.run(
        "INSERT INTO people (id, email, password_hash, operator, created_at, password_changed_at) VALUES (?, ?, NULL, 0, 1, NULL)",
        ["person_other", email],
      );
      inserted();
      await held;
    });
    await written;
    const signUp = outcome(people.signIn.signUp({ email, password: PASSWORD }, CLIENT));
    if (dialect === "postgres") {
      // Until the sign-up's insert is waiting on the uncommitted row (the unique index).
      const deadline = Date.now() + 10_000;
      while (
        (await sql.get<{ n: bigint }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        ))!.n === 0n
      ) {
        if (Date.now() > deadline) throw new Error("the sign-up never waited on the other's row");
        await Bun.sleep(5);
      }
    } else {
      await Bun.sleep(100); // SQLite: the sign-up waits for the open transaction at its first read
    }
    commit();
    await other;
    expect(await signUp).toBe("unauthorized");
    expect(await peopleWith(sql, email)).toBe(1n);
    expect((await sql.get<{ n: bigint }>("SELECT count(*) AS n FROM accounts"))!.n).toBe(0n);
  });
});
