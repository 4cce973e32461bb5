import { randomBytes } from "node:crypto";
import type { Sql } from "../db/sql.ts";
import { serviceIn } from "../db/store.ts";
import { DomainError } from "../lib/errors.ts";
import { base32Encode } from "../lib/totp.ts";
import type { PeopleStore, PersonRow } from "./store.ts";
import type { Role } from "./types.ts";

/**
 * What the people services (src/people/*.ts) share: the one PeopleStore, the clock, the
 * transaction helper, tokens, emails and the messages more than one of them gives.
 */

export const RECOVERY_CODE_COUNT = 10;
export const EMAIL_MAX_LENGTH = 254;
const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The one message for an unknown email, a wrong password, or a person who cannot sign in. */
export const SIGNIN_FAILED = "The email or password is incorrect.";
export const LINK_INVALID = "This link is invalid, used or expired.";

/**
 * Told of each new invite (that names an email) and reset link, inside its transaction, with the
 * one address the link belongs to. Returns whether a message was queued.
 */
export interface PeopleNotifier {
  invite(
    tx: Sql,
    to: string,
    invite: { url: string; expiresAt: number; accountId: string | null; role: Role },
  ): Promise<boolean>;
  passwordReset(tx: Sql, to: string, url: string): Promise<boolean>;
  /** Whether links can be mailed at all ([smtp] is set). */
  enabled(): boolean;
}

/** What every people service uses: the people tables and the clock (epoch ms; tests move it). */
export interface PeopleCore {
  store: PeopleStore;
  now: () => number;
}

/** 32 random bytes, base64url: session tokens, invite and reset links, CSRF tokens. */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Recovery codes: 10 base32 characters (50 bits) shown as XXXXX-XXXXX. */
export function newRecoveryCode(): string {
  const c = base32Encode(randomBytes(7)).slice(0, 10);
  return `${c.slice(0, 5)}-${c.slice(5)}`;
}

export function normalizeRecoveryCode(code: string): string {
  return code.replace(/[\s-]/g, "").toUpperCase();
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** A normalized email, or `validation_error` (param "email"). */
export function checkEmail(email: string): string {
  const e = normalizeEmail(email);
  if (e.length > EMAIL_MAX_LENGTH || !EMAIL_SHAPE.test(e))
    throw new DomainError("validation_error", "Enter a valid email address.", { param: "email" });
  return e;
}

/** Whether a link or cookie token has a plausible length (ours are 43 characters). */
export function tokenShaped(token: unknown): token is string {
  return typeof token === "string" && token.length >= 16 && token.length <= 128;
}

/** The base of each people service: its store, its clock, and one-transaction bodies. */
export abstract class PeopleServiceBase {
  readonly store: PeopleStore;
  protected readonly now: () => number;
  /** Further fields `atomic` binds to its transaction (stores or services with `in(tx)`). */
  protected readonly boundFields: readonly string[] = [];

  constructor(core: PeopleCore) {
    this.store = core.store;
    this.now = core.now;
  }

  protected seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  /** This service with its store (and `boundFields`) writing in `tx`. */
  in(tx: Sql): this {
    return serviceIn(this, tx, ["store", ...this.boundFields]);
  }

  /** Runs `fn` in one transaction, with `self` a view of this service whose stores write in it. */
  protected async atomic<T>(fn: (self: this, tx: Sql) => Promise<T>): Promise<T> {
    return await this.store.transaction(async (tx) => await fn(this.in(tx), tx));
  }

  protected async requirePerson(personId: string): Promise<PersonRow> {
    const p = await this.store.personById(personId);
    if (!p) throw new DomainError("not_found", "No such person.", { param: "person_id" });
    return p;
  }
}
