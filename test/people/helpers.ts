import type { Currency } from "../../src/accounts/store.ts";
import { createServices } from "../../src/app/services.ts";
import { migrate, openDatabase } from "../../src/db/database.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { base32Decode, hotp, totpStep } from "../../src/lib/totp.ts";
import type { ClientInfo, SignupMode } from "../../src/people/types.ts";
import { sqlOf } from "../helpers/sql.ts";

/** Cheap argon2id for tests (the production cost is Bun's default). */
export const TEST_PASSWORD_COST = { memoryCost: 1024, timeCost: 1 };
export const PASSWORD = "correct horse battery";
export const CLIENT: ClientInfo = { ip: "203.0.113.7", userAgent: "test-agent" };

/** The people service over a fresh in-memory database, with a clock the test moves (epoch ms). */
export function peopleFixture(options: { signup?: SignupMode; currency?: Currency } = {}) {
  const db = openDatabase(":memory:");
  migrate(db);
  let nowMs = Date.UTC(2026, 0, 15, 12, 0, 0);
  const consoleSettings = {
    signup: options.signup ?? ("invite" as SignupMode),
    currency: options.currency ?? ("USD" as Currency),
  };
  // createServices takes epoch seconds (the ledger's clock) and gives the people service milliseconds.
  const services = createServices(sqlOf(db), "http://gengate.test", () => nowMs / 1000, {
    console: () => consoleSettings,
    passwordCost: TEST_PASSWORD_COST,
  });
  const { people, accounts } = services;
  const clock = {
    now: () => nowMs,
    seconds: () => Math.floor(nowMs / 1000),
    advance(seconds: number) {
      nowMs += seconds * 1000;
    },
  };
  /** A new person with their own account, made through an operator invite. */
  async function person(email: string, password = PASSWORD) {
    const invite = await people.invites.createInvite({ email });
    const accepted = await people.signIn.acceptInvite(tokenOf(invite.url), password, CLIENT);
    return {
      ...accepted,
      personId: accepted.session.session.personId,
      accountId: accepted.session.session.accountId!,
    };
  }
  /** Adds `email` (a new person) to the account with `role`, through an invite. */
  async function member(accountId: string, email: string, role: "owner" | "member" = "member") {
    const invite = await people.invites.createInvite({ email, accountId, role });
    const accepted = await people.signIn.acceptInvite(tokenOf(invite.url), PASSWORD, CLIENT);
    return { ...accepted, personId: accepted.session.session.personId };
  }
  /** The current TOTP code of a base32 secret. */
  function code(secret: string, offsetSteps = 0) {
    return hotp(base32Decode(secret)!, totpStep(clock.seconds()) + offsetSteps);
  }
  return { db, services, people, accounts, clock, consoleSettings, person, member, code };
}

/** The token at the end of an invite or reset URL. */
export function tokenOf(url: string): string {
  return url.slice(url.lastIndexOf("/") + 1);
}

/** The DomainError a call throws (sync or async), or fails the test. */
export async function domainError(fn: () => unknown): Promise<DomainError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error("expected a DomainError, nothing was thrown");
}
