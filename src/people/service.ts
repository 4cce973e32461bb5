import { randomBytes } from "node:crypto";
import type { AccountStore, Currency } from "../accounts/accounts.ts";
import { digestsEqual, hashSecret } from "../accounts/keys.ts";
import type { ConsoleSettings } from "../config/schema.ts";
import { type Sql, SqlConstraintError } from "../db/sql.ts";
import { serviceIn } from "../db/store.ts";
import { DomainError } from "../lib/errors.ts";
import { newId, newTimeOrderedId } from "../lib/ids.ts";
import { base32Encode, newTotpSecret, otpauthUrl, verifyTotp } from "../lib/totp.ts";
import { type InviteRow, PeopleStore, type PersonRow, type SessionRow } from "./store.ts";
import {
  type ClientInfo,
  type ConsoleSession,
  INVITE_TTL_SECONDS,
  type NewSession,
  PASSWORD_MIN_LENGTH,
  RESET_TTL_SECONDS,
  type Role,
  SESSION_ABSOLUTE_SECONDS,
  SESSION_IDLE_SECONDS,
  SIGNIN_MAX_FAILURES,
  SIGNIN_WINDOW_SECONDS,
} from "./types.ts";

/** Longest password accepted (argon2 takes any length; this bounds the work a request can ask for). */
export const PASSWORD_MAX_LENGTH = 1024;
export const RECOVERY_CODE_COUNT = 10;
const EMAIL_MAX_LENGTH = 254;
const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** last_seen_at is written at most once a minute per session. */
const TOUCH_EVERY_SECONDS = 60;
const TOTP_ISSUER = "gengate";

/** The one message for an unknown email, a wrong password, or a person who cannot sign in. */
export const SIGNIN_FAILED = "The email or password is incorrect.";
const LINK_INVALID = "This link is invalid, used or expired.";

export interface PeopleServiceOptions {
  publicUrl: string;
  /** The live [console] settings, read at each call (a config reload swaps them). */
  console?: () => Pick<ConsoleSettings, "signup" | "currency">;
  /** Clock, epoch ms (tests move it). */
  now?: () => number;
  /** argon2id cost; tests lower it. Default: Bun's (64 MiB, t = 2). */
  passwordCost?: { memoryCost: number; timeCost: number };
  /** Mails invite and reset links when [smtp] is set (src/mail/); default: nothing is mailed. */
  notify?: PeopleNotifier;
}

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

/** The forgot-password page mails at most this many reset links per person per hour. */
export const FORGOT_MAILS_PER_HOUR = 3;

export interface SessionView {
  id: string;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
  userAgent: string | null;
  ip: string | null;
}

export interface MemberView {
  personId: string;
  email: string;
  role: Role;
  createdAt: number;
  twoFactor: boolean;
}

export interface PersonView {
  id: string;
  email: string;
  operator: boolean;
  twoFactor: boolean;
  hasPassword: boolean;
  createdAt: number;
  disabledAt: number | null;
  memberships: { accountId: string; role: Role }[];
}

export interface InviteView {
  id: string;
  email: string | null;
  accountId: string | null;
  role: Role;
  operator: boolean;
  createdBy: string | null;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
  usedBy: string | null;
  revokedAt: number | null;
  state: "pending" | "used" | "revoked" | "expired";
}

/** 32 random bytes, base64url: session tokens, invite and reset links, CSRF tokens. */
function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Recovery codes: 10 base32 characters (50 bits) shown as XXXXX-XXXXX. */
function newRecoveryCode(): string {
  const c = base32Encode(randomBytes(7)).slice(0, 10);
  return `${c.slice(0, 5)}-${c.slice(5)}`;
}

function normalizeRecoveryCode(code: string): string {
  return code.replace(/[\s-]/g, "").toUpperCase();
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * People, sign-in, sessions, invites, password resets, two-factor and memberships: the contract
 * the console's HTTP layer codes against (CONSOLE-PLAN / src/people/types.ts). Methods that hash or
 * verify a password are async (argon2id takes a few hundred ms; Bun runs it off the event loop).
 */
export class PeopleService {
  readonly store: PeopleStore;
  private readonly now: () => number;
  private readonly console: () => Pick<ConsoleSettings, "signup" | "currency">;
  private readonly publicUrl: string;
  private readonly cost: { memoryCost: number; timeCost: number } | null;
  private dummyHash: Promise<string> | null = null;
  private readonly notify: PeopleNotifier | null;

  /** Runs `fn` in one transaction, with `self` a view of this service whose stores write in it. */
  private async atomic<T>(fn: (self: this, tx: Sql) => Promise<T>): Promise<T> {
    return await this.store.transaction(
      async (tx) => await fn(serviceIn(this, tx, ["store", "accounts"]), tx),
    );
  }

  constructor(
    db: ConstructorParameters<typeof PeopleStore>[0],
    private readonly accounts: AccountStore,
    options: PeopleServiceOptions,
  ) {
    this.store = new PeopleStore(db);
    this.now = options.now ?? Date.now;
    this.console = options.console ?? (() => ({ signup: "invite", currency: "USD" }));
    this.publicUrl = options.publicUrl;
    this.cost = options.passwordCost ?? null;
    this.notify = options.notify ?? null;
  }

  private seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  // --- passwords ----------------------------------------------------------------------------

  private hashPassword(password: string): Promise<string> {
    return Bun.password.hash(password, { algorithm: "argon2id", ...(this.cost ?? {}) });
  }

  /** Verifies against the person's hash, or a dummy hash of the same cost when there is none. */
  private async verifyPassword(password: string, hash: string | null): Promise<boolean> {
    if (password.length > PASSWORD_MAX_LENGTH) return false;
    if (hash === null) {
      this.dummyHash ??= this.hashPassword(newToken());
      await Bun.password.verify(password, await this.dummyHash);
      return false;
    }
    return Bun.password.verify(password, hash);
  }

  private checkNewPassword(password: string, param = "password"): void {
    if (typeof password !== "string" || password.length < PASSWORD_MIN_LENGTH)
      throw new DomainError(
        "validation_error",
        `The password must have at least ${PASSWORD_MIN_LENGTH} characters.`,
        {
          param,
        },
      );
    if (password.length > PASSWORD_MAX_LENGTH)
      throw new DomainError(
        "validation_error",
        `The password must have at most ${PASSWORD_MAX_LENGTH} characters.`,
        {
          param,
        },
      );
  }

  private checkEmail(email: string): string {
    const e = normalizeEmail(email);
    if (e.length > EMAIL_MAX_LENGTH || !EMAIL_SHAPE.test(e))
      throw new DomainError("validation_error", "Enter a valid email address.", { param: "email" });
    return e;
  }

  // --- throttling ---------------------------------------------------------------------------

  /**
   * The throttle's subjects, each at most 260 characters whatever was typed: an email no person can
   * have (over 254 characters) is counted under its SHA-256, so its repeats still add up. A 128 MiB
   * "email" used to be written whole into signin_failures (515 MiB of data dir).
   */
  private subjects(email: string, client: ClientInfo | null | undefined): string[] {
    const s = [
      email.length <= EMAIL_MAX_LENGTH
        ? `email:${email}`
        : `email-sha256:${hashSecret(email).toString("hex")}`,
    ];
    if (client?.ip) s.push(`ip:${client.ip.slice(0, 64)}`);
    return s;
  }

  /** 429 while any subject (the email, the client address) has 10 failures in the window. */
  private async checkThrottle(subjects: string[]): Promise<void> {
    const nowMs = this.now();
    const windowMs = SIGNIN_WINDOW_SECONDS * 1000;
    let retryMs = 0;
    for (const s of subjects) {
      const f = await this.store.failures(s, nowMs - windowMs);
      if (f.count >= SIGNIN_MAX_FAILURES && f.oldestMs !== null)
        retryMs = Math.max(retryMs, f.oldestMs + windowMs - nowMs);
    }
    if (retryMs > 0) {
      const retryAfterSeconds = Math.max(1, Math.ceil(retryMs / 1000));
      throw new DomainError(
        "rate_limited",
        `Too many failed sign-ins; try again in ${Math.ceil(retryAfterSeconds / 60)} minute(s).`,
        { retryAfterSeconds },
      );
    }
  }

  private async recordFailure(subjects: string[]): Promise<void> {
    const nowMs = this.now();
    await this.store.recordFailure(subjects, nowMs, nowMs - SIGNIN_WINDOW_SECONDS * 1000);
  }

  private async failSignIn(subjects: string[], param?: string, message = SIGNIN_FAILED): Promise<never> {
    await this.recordFailure(subjects);
    throw new DomainError("unauthorized", message, param ? { param } : {});
  }

  // --- sessions -----------------------------------------------------------------------------

  private async consoleSession(row: SessionRow, person: PersonRow): Promise<ConsoleSession> {
    let accountId = row.account_id;
    let role: Role | null = null;
    const m = accountId ? await this.store.membership(accountId, person.id) : null;
    if (m) role = m.role;
    else {
      // Removed from the account being looked at: fall back to the first account left, if any.
      const first = (await this.store.accountsOf(person.id))[0];
      accountId = first?.account_id ?? null;
      role = first?.role ?? null;
    }
    return {
      sessionId: row.id,
      personId: person.id,
      email: person.email,
      operator: person.operator === 1n,
      accountId,
      role,
      csrfToken: row.csrf_token,
      twoFactor: person.totp_enabled_at !== null,
    };
  }

  private async openSession(
    person: PersonRow,
    client: ClientInfo | null | undefined,
    accountId?: string,
  ): Promise<NewSession> {
    const now = this.seconds();
    const token = newToken();
    const id = newId("sess");
    const expiresAt = now + SESSION_ABSOLUTE_SECONDS;
    const account = accountId ?? (await this.store.accountsOf(person.id))[0]?.account_id ?? null;
    await this.store.insertSession({
      id,
      tokenHash: hashSecret(token),
      personId: person.id,
      accountId: account,
      csrfToken: newToken(),
      now,
      expiresAt,
      userAgent: client?.userAgent?.slice(0, 512) ?? null,
      ip: client?.ip?.slice(0, 64) ?? null,
    });
    const row = (await this.store.sessionById(id))!;
    return { token, session: await this.consoleSession(row, person), expiresAt };
  }

  /** The signed-in person behind a cookie token, or null (unknown, revoked, idle or too old). */
  async resolveSession(token: string, _client?: ClientInfo): Promise<ConsoleSession | null> {
    if (typeof token !== "string" || token.length < 16 || token.length > 128) return null;
    const digest = hashSecret(token);
    const row = await this.store.sessionByHash(digest);
    if (!row || !digestsEqual(row.token_hash, digest) || row.revoked_at !== null) return null;
    const now = this.seconds();
    if (now >= Number(row.expires_at) || now - Number(row.last_seen_at) >= SESSION_IDLE_SECONDS) return null;
    const person = await this.store.personById(row.person_id);
    if (!person || person.disabled_at !== null) return null;
    if (now - Number(row.last_seen_at) >= TOUCH_EVERY_SECONDS)
      await this.store.touchSession(row.id, now, now - TOUCH_EVERY_SECONDS + 1);
    return this.consoleSession(row, person);
  }

  /**
   * Email and password, then the second factor when the person has one. Unknown email, wrong
   * password and a person who cannot sign in all give the same `unauthorized` with the same
   * message, after the same argon2 work. A missing or wrong code after a right password is
   * `unauthorized` with param "code".
   */
  async signIn(
    input: { email: string; password: string; code?: string | null },
    client: ClientInfo,
  ): Promise<NewSession> {
    const email = normalizeEmail(String(input.email ?? ""));
    const subjects = this.subjects(email, client);
    await this.checkThrottle(subjects);
    const person = email.length <= EMAIL_MAX_LENGTH ? await this.store.personByEmail(email) : null;
    const usable = person !== null && person.disabled_at === null ? person.password_hash : null;
    const ok = await this.verifyPassword(String(input.password ?? ""), usable);
    if (!ok || !person) return await this.failSignIn(subjects);
    if (person.totp_enabled_at !== null) await this.requireSecondFactor(person, input.code, subjects);
    await this.store.clearFailures(subjects[0]!);
    return this.openSession(person, client);
  }

  /** After the right password: a missing code asks for one; a wrong one is a counted failure. */
  private async requireSecondFactor(
    person: PersonRow,
    code: string | null | undefined,
    subjects: string[],
  ): Promise<void> {
    const c = String(code ?? "").trim();
    if (!c)
      throw new DomainError("unauthorized", "Enter the code from your authenticator app.", { param: "code" });
    if (!(await this.checkSecondFactor(person, c)))
      await this.failSignIn(subjects, "code", "The code is incorrect or was already used.");
  }

  /** A TOTP code (each step once) or an unused recovery code. */
  private async checkSecondFactor(person: PersonRow, code: string): Promise<boolean> {
    if (/^\d{6}$/.test(code.replace(/\s/g, ""))) {
      if (!person.totp_secret) return false;
      const step = verifyTotp(
        person.totp_secret,
        code,
        this.seconds(),
        person.totp_last_step === null ? null : Number(person.totp_last_step),
      );
      return step !== null && (await this.store.useTotpStep(person.id, step));
    }
    const clean = normalizeRecoveryCode(code);
    if (!/^[A-Z2-7]{10}$/.test(clean)) return false;
    return await this.store.useRecoveryCode(person.id, hashSecret(clean), this.seconds());
  }

  async signOut(sessionId: string): Promise<void> {
    await this.store.revokeSession(sessionId, this.seconds());
  }

  /** Revokes every session of the person (but `exceptSessionId`); returns how many. */
  async signOutEverywhere(personId: string, exceptSessionId?: string): Promise<number> {
    return await this.store.revokeSessionsOf(personId, this.seconds(), exceptSessionId ?? null);
  }

  /** Points the session at another account of the person; another account is 404. */
  async switchAccount(sessionId: string, personId: string, accountId: string): Promise<ConsoleSession> {
    return await this.atomic(async (self) => {
      if (!(await self.store.membership(accountId, personId)))
        throw new DomainError("not_found", "No such account.", { param: "account_id" });
      if (!(await self.store.setSessionAccount(sessionId, personId, accountId)))
        throw new DomainError("not_found", "No such session.", { param: "session_id" });
      return self.consoleSession(
        (await self.store.sessionById(sessionId))!,
        (await self.store.personById(personId))!,
      );
    });
  }

  async listSessions(personId: string): Promise<SessionView[]> {
    const now = this.seconds();
    return (await this.store.liveSessionsOf(personId, now, now - SESSION_IDLE_SECONDS)).map((s) => ({
      id: s.id,
      createdAt: Number(s.created_at),
      lastSeenAt: Number(s.last_seen_at),
      expiresAt: Number(s.expires_at),
      userAgent: s.user_agent,
      ip: s.ip,
    }));
  }

  /** Revokes one of the person's sessions; another person's session id is 404. */
  async revokeSession(personId: string, sessionId: string): Promise<void> {
    if (!(await this.store.revokeSession(sessionId, this.seconds(), personId)))
      throw new DomainError("not_found", "No such session.", { param: "session_id" });
  }

  // --- sign-up and invites ------------------------------------------------------------------

  /** A unique account name derived from the email ("ann@example.com", then "ann@example.com (2)"...). */
  private async accountNameFor(email: string): Promise<string> {
    for (let n = 1; ; n++) {
      const name = n === 1 ? email : `${email} (${n})`;
      if (!(await this.accounts.findAccountByName(name))) return name;
    }
  }

  private async liveInvite(token: string): Promise<InviteRow | null> {
    if (typeof token !== "string" || token.length < 16 || token.length > 128) return null;
    const digest = hashSecret(token);
    const row = await this.store.inviteByHash(digest);
    if (!row || !digestsEqual(row.token_hash, digest)) return null;
    if (row.used_at !== null || row.revoked_at !== null || Number(row.expires_at) <= this.seconds())
      return null;
    return row;
  }

  /** Made by the operator: the CLI or admin API (no creator) or a person with the operator flag. */
  private async operatorMade(invite: InviteRow): Promise<boolean> {
    if (invite.created_by === null) return true;
    return (await this.store.personById(invite.created_by))?.operator === 1n;
  }

  /** An invite usable under the current sign-up mode, or 404 (same answer for unknown and refused). */
  private async usableInvite(token: string): Promise<InviteRow> {
    const invite = await this.liveInvite(token);
    if (!invite || (this.console().signup === "closed" && !(await this.operatorMade(invite))))
      throw new DomainError("not_found", LINK_INVALID, { param: "invite" });
    return invite;
  }

  async inviteInfo(
    token: string,
  ): Promise<{ email: string | null; accountName: string | null; role: Role; personExists: boolean } | null> {
    const invite = await this.liveInvite(token);
    if (!invite) return null;
    if (this.console().signup === "closed" && !(await this.operatorMade(invite))) return null;
    return {
      email: invite.email,
      accountName: invite.account_id
        ? ((await this.accounts.getAccount(invite.account_id))?.name ?? null)
        : null,
      role: invite.role,
      personExists: invite.email !== null && (await this.store.personByEmail(invite.email)) !== null,
    };
  }

  /**
   * Sign-up: a person, a new account (the operator's currency), the person as its owner and the
   * Default key (returned in clear, once), in one transaction. `open` mode needs nothing; `invite`
   * needs a sign-up invite; `closed` an operator-made one. An email that already has a person:
   * with that person's password, they get the new account; otherwise the same error as a failed
   * sign-in (counted by throttling). See docs/console.md "People and sign-in".
   */
  async signUp(
    input: { email: string; password: string; invite?: string | null; code?: string | null },
    client: ClientInfo,
  ): Promise<{ session: NewSession; accountId: string; keyId: string; key: string }> {
    const email = this.checkEmail(String(input.email ?? ""));
    const mode = this.console().signup;
    let invite: InviteRow | null = null;
    if (input.invite) {
      invite = await this.usableInvite(input.invite);
      if (invite.account_id !== null)
        throw new DomainError(
          "validation_error",
          "This invite joins an existing account: open its link instead.",
          {
            param: "invite",
          },
        );
      if (invite.email !== null && invite.email !== email)
        throw new DomainError("validation_error", "This invite is for another email address.", {
          param: "email",
        });
    } else if (mode !== "open") {
      throw new DomainError("forbidden", "Sign-up needs an invite.", { param: "invite" });
    }
    this.checkNewPassword(input.password);
    const r = await this.redeem({
      email,
      password: input.password,
      code: input.code ?? null,
      invite,
      client,
      newAccount: true,
    });
    return { session: r.session, accountId: r.accountId, keyId: r.keyId!, key: r.key! };
  }

  /**
   * Accepts an invite link: a new person sets their password; an existing person (the invite's
   * email already signs in) must give their current password. account_id NULL: a new account owned
   * by the person (and its Default key, returned once); otherwise the person joins that account.
   * An invite without an email (the first-start invite) needs `email`. An existing person with
   * two-factor on also gives a code (`unauthorized` with param "code" when missing or wrong).
   */
  async acceptInvite(
    token: string,
    password: string,
    client: ClientInfo,
    email?: string | null,
    code?: string | null,
  ): Promise<{ session: NewSession; key: string | null; keyId: string | null }> {
    const invite = await this.usableInvite(token);
    let who = invite.email;
    if (who === null) {
      if (!email) throw new DomainError("validation_error", "Enter your email address.", { param: "email" });
      who = this.checkEmail(email);
    }
    const r = await this.redeem({
      email: who,
      password,
      code: code ?? null,
      invite,
      client,
      newAccount: invite.account_id === null,
    });
    return { session: r.session, key: r.key, keyId: r.keyId };
  }

  private async redeem(o: {
    email: string;
    password: string;
    code: string | null;
    invite: InviteRow | null;
    client: ClientInfo;
    newAccount: boolean;
  }): Promise<{ session: NewSession; accountId: string; keyId: string | null; key: string | null }> {
    const subjects = this.subjects(o.email, o.client);
    let existing = await this.store.personByEmail(o.email);
    if (existing) {
      // Only the person themselves: their current password (throttled like a sign-in).
      await this.checkThrottle(subjects);
      const ok =
        existing.disabled_at === null && (await this.verifyPassword(o.password, existing.password_hash));
      if (!ok) await this.failSignIn(subjects);
      // The password alone never opens a session for a person with two-factor on.
      if (existing.totp_enabled_at !== null) await this.requireSecondFactor(existing, o.code, subjects);
    } else {
      this.checkNewPassword(o.password);
    }
    const passwordHash = existing ? null : await this.hashPassword(o.password);
    const now = this.seconds();
    const result = await this.atomic(async (self) => {
      // Re-read inside the transaction: a concurrent sign-up with the same email loses here.
      const again = await self.store.personByEmail(o.email);
      if (!existing && again) throw new DomainError("unauthorized", SIGNIN_FAILED);
      existing = again;
      const personId = existing?.id ?? newTimeOrderedId("person", self.now());
      if (!existing) {
        // On PostgreSQL (READ COMMITTED) a concurrent sign-up with this email may commit after the
        // re-read: its row then refuses this insert (unique email). The loser gets the answer an
        // existing email gets, not a 500.
        await self.store
          .insertPerson({ id: personId, email: o.email, passwordHash, operator: false, now })
          .catch((err: unknown) => {
            throw err instanceof SqlConstraintError && err.kind === "unique"
              ? new DomainError("unauthorized", SIGNIN_FAILED)
              : err;
          });
      }
      let invite = o.invite;
      if (invite) {
        invite = await self.store.consumeInvite(invite.token_hash, personId, now);
        if (!invite) throw new DomainError("not_found", LINK_INVALID, { param: "invite" });
        if (invite.operator === 1n) await self.store.setOperator(personId);
      }
      let accountId: string;
      let keyId: string | null = null;
      let key: string | null = null;
      if (o.newAccount || !invite?.account_id) {
        const created = await self.accounts.createAccount(
          await self.accountNameFor(o.email),
          self.console().currency,
          {
            keyCreatedBy: personId,
          },
        );
        accountId = created.account.id;
        keyId = created.keyId;
        key = created.key;
        await self.store.addMembership(accountId, personId, "owner", now);
      } else {
        accountId = invite.account_id;
        if (!(await self.accounts.getAccount(accountId)))
          throw new DomainError("not_found", LINK_INVALID, { param: "invite" });
        await self.store.addMembership(accountId, personId, invite.role, now);
      }
      const person = (await self.store.personById(personId))!;
      return { session: await self.openSession(person, o.client, accountId), accountId, keyId, key };
    });
    await this.store.clearFailures(subjects[0]!);
    return result;
  }

  /**
   * A one-time invite link (7 days). No creator (CLI, admin API) or an operator: any account or a
   * new one, any role, the operator flag. An owner: only into an account they own, no operator flag.
   */
  async createInvite(input: {
    email?: string | null;
    accountId?: string | null;
    role?: Role;
    operator?: boolean;
    createdBy?: string | null;
  }): Promise<{ url: string; expiresAt: number; id: string; mailed: boolean }> {
    const email = input.email ? this.checkEmail(input.email) : null;
    const accountId = input.accountId ?? null;
    if (input.role !== undefined && input.role !== "owner" && input.role !== "member")
      throw new DomainError("validation_error", 'The role must be "owner" or "member".', { param: "role" });
    const role: Role = accountId === null ? "owner" : (input.role ?? "member");
    const createdBy = input.createdBy ?? null;
    return await this.atomic(async (self, tx) => {
      if (accountId !== null && !(await self.accounts.getAccount(accountId)))
        throw new DomainError("not_found", `No account ${accountId}.`, { param: "account_id" });
      if (createdBy !== null) {
        const creator = await self.store.personById(createdBy);
        if (!creator) throw new DomainError("not_found", "No such person.", { param: "created_by" });
        if (creator.operator !== 1n) {
          if (input.operator) throw new DomainError("forbidden", "Only operators invite operators.");
          if (accountId === null || (await self.store.membership(accountId, createdBy))?.role !== "owner")
            throw new DomainError("forbidden", "Only the account's owners invite members.");
        }
      }
      const token = newToken();
      const now = self.seconds();
      const expiresAt = now + INVITE_TTL_SECONDS;
      const id = newTimeOrderedId("inv", self.now());
      await self.store.insertInvite({
        id,
        tokenHash: hashSecret(token),
        email,
        accountId,
        role,
        operator: input.operator === true,
        createdBy,
        now,
        expiresAt,
      });
      const url = `${self.publicUrl}/console/invite/${token}`;
      // Only to the invite's own email; an invite without one is handed over by hand.
      const mailed =
        email !== null &&
        ((await self.notify?.invite(tx, email, { url, expiresAt, accountId, role })) ?? false);
      return { url, expiresAt, id, mailed };
    });
  }

  async revokeInvite(id: string): Promise<void> {
    if (!(await this.store.revokeInvite(id, this.seconds())))
      throw new DomainError("not_found", `No unused invite ${id}.`, { param: "invite_id" });
  }

  async listInvites(options: { limit?: number; after?: string | null } = {}): Promise<InviteView[]> {
    return (await this.store.listInvites(options.limit ?? 100, options.after ?? null)).map((i) =>
      this.inviteView(i),
    );
  }

  /** One invite by id (operators), or null. */
  async getInvite(id: string): Promise<InviteView | null> {
    const row = await this.store.inviteById(id);
    return row && this.inviteView(row);
  }

  private inviteView(i: InviteRow): InviteView {
    return {
      id: i.id,
      email: i.email,
      accountId: i.account_id,
      role: i.role,
      operator: i.operator === 1n,
      createdBy: i.created_by,
      createdAt: Number(i.created_at),
      expiresAt: Number(i.expires_at),
      usedAt: i.used_at === null ? null : Number(i.used_at),
      usedBy: i.used_by,
      revokedAt: i.revoked_at === null ? null : Number(i.revoked_at),
      state:
        i.used_at !== null
          ? "used"
          : i.revoked_at !== null
            ? "revoked"
            : Number(i.expires_at) <= this.seconds()
              ? "expired"
              : "pending",
    };
  }

  async listPeople(options: { limit?: number; after?: string | null } = {}): Promise<PersonView[]> {
    const rows = await this.store.listPeople(options.limit ?? 100, options.after ?? null);
    const memberships = await this.store.membershipsByPeople(rows.map((p) => p.id));
    return rows.map((p) => ({
      id: p.id,
      email: p.email,
      operator: p.operator === 1n,
      twoFactor: p.totp_enabled_at !== null,
      hasPassword: p.password_hash !== null,
      createdAt: Number(p.created_at),
      disabledAt: p.disabled_at === null ? null : Number(p.disabled_at),
      memberships: memberships
        .filter((m) => m.person_id === p.id)
        .map((m) => ({ accountId: m.account_id, role: m.role })),
    }));
  }

  // --- password resets ----------------------------------------------------------------------

  /**
   * A one-time reset link (1 hour) for a known email, or null; callers show the same either way.
   * With [smtp] the link is also mailed, to the person's stored email only (`mailed`).
   */
  async requestPasswordReset(email: string): Promise<{ url: string; mailed: boolean } | null> {
    const person = await this.store.personByEmail(normalizeEmail(String(email ?? "")));
    if (!person || person.disabled_at !== null) return null;
    const token = newToken();
    const now = this.seconds();
    const url = `${this.publicUrl}/console/reset/${token}`;
    return await this.atomic(async (self, tx) => {
      await self.store.insertReset(hashSecret(token), person.id, now, now + RESET_TTL_SECONDS);
      return { url, mailed: (await self.notify?.passwordReset(tx, person.email, url)) ?? false };
    });
  }

  /**
   * The console's "forgot password": with [smtp], a reset link mailed to a known, enabled person
   * (at most FORGOT_MAILS_PER_HOUR an hour, so the page cannot be used to flood a mailbox); without
   * it, nothing (a link nobody receives would only be a live secret). Returns nothing: the page
   * answers the same whether the email exists or not.
   */
  async forgotPassword(email: string): Promise<void> {
    if (!this.notify?.enabled()) return;
    const person = await this.store.personByEmail(normalizeEmail(String(email ?? "")));
    if (!person || person.disabled_at !== null) return;
    if ((await this.store.countResetsSince(person.id, this.seconds() - 3600)) >= FORGOT_MAILS_PER_HOUR)
      return;
    await this.requestPasswordReset(person.email);
  }

  /** Whether a reset link is live (the page shows the form or "invalid link"). */
  async resetLinkValid(token: string): Promise<boolean> {
    if (typeof token !== "string" || token.length < 16 || token.length > 128) return false;
    return await this.liveReset(hashSecret(token));
  }

  private async liveReset(digest: Uint8Array): Promise<boolean> {
    const row = await this.store.resetByHash(digest);
    return (
      row !== null &&
      digestsEqual(row.token_hash, digest) &&
      row.used_at === null &&
      Number(row.expires_at) > this.seconds()
    );
  }

  /** Sets a new password from a reset link (once) and revokes every session of the person. */
  async resetPassword(token: string, password: string): Promise<void> {
    this.checkNewPassword(password);
    if (!(await this.resetLinkValid(token)))
      throw new DomainError("not_found", LINK_INVALID, { param: "token" });
    const hash = await this.hashPassword(password);
    await this.atomic(async (self) => {
      const now = self.seconds();
      const reset = await self.store.consumeReset(hashSecret(token), now);
      if (!reset) throw new DomainError("not_found", LINK_INVALID, { param: "token" });
      await self.store.setPassword(reset.person_id, hash, now);
      await self.store.expireResetsOf(reset.person_id, now);
      await self.store.revokeSessionsOf(reset.person_id, now, null);
      const person = (await self.store.personById(reset.person_id))!;
      await self.store.clearFailures(`email:${person.email}`);
    });
  }

  /** Changes the password (the current one is required) and revokes every other session. */
  async changePassword(
    personId: string,
    current: string,
    next: string,
    keepSessionId: string,
  ): Promise<void> {
    const person = await this.requirePerson(personId);
    if (!(await this.verifyPassword(String(current ?? ""), person.password_hash)))
      throw new DomainError("unauthorized", "The current password is incorrect.", {
        param: "current_password",
      });
    this.checkNewPassword(next, "new_password");
    const hash = await this.hashPassword(next);
    await this.atomic(async (self) => {
      const now = self.seconds();
      await self.store.setPassword(personId, hash, now);
      await self.store.expireResetsOf(personId, now);
      await self.store.revokeSessionsOf(personId, now, keepSessionId);
    });
  }

  private async requirePerson(personId: string): Promise<PersonRow> {
    const p = await this.store.personById(personId);
    if (!p) throw new DomainError("not_found", "No such person.", { param: "person_id" });
    return p;
  }

  // --- two-factor ---------------------------------------------------------------------------

  /** A new pending secret (replacing any pending one); two-factor is on once enableTwoFactor confirms it. */
  async beginTwoFactor(personId: string): Promise<{ secret: string; otpauthUrl: string }> {
    const person = await this.requirePerson(personId);
    if (person.totp_enabled_at !== null)
      throw new DomainError("conflict", "Two-factor sign-in is already on; turn it off first.");
    const secret = newTotpSecret();
    await this.store.setTotpSecret(personId, secret);
    return { secret, otpauthUrl: otpauthUrl(secret, person.email, TOTP_ISSUER) };
  }

  /** The secret begun by beginTwoFactor and not yet confirmed (to show the set-up again), or null. */
  async pendingTwoFactor(personId: string): Promise<{ secret: string; otpauthUrl: string } | null> {
    const person = await this.requirePerson(personId);
    if (!person.totp_secret || person.totp_enabled_at !== null) return null;
    return {
      secret: person.totp_secret,
      otpauthUrl: otpauthUrl(person.totp_secret, person.email, TOTP_ISSUER),
    };
  }

  /** Confirms the pending secret with a code; returns 10 one-time recovery codes (shown once). */
  async enableTwoFactor(personId: string, code: string): Promise<{ recoveryCodes: string[] }> {
    return await this.atomic(async (self) => {
      const person = await self.requirePerson(personId);
      if (person.totp_enabled_at !== null)
        throw new DomainError("conflict", "Two-factor sign-in is already on.");
      if (!person.totp_secret)
        throw new DomainError("conflict", "Start two-factor set-up first.", { param: "code" });
      const step = verifyTotp(person.totp_secret, String(code ?? ""), self.seconds());
      if (step === null)
        throw new DomainError("validation_error", "The code is incorrect; check the time on your device.", {
          param: "code",
        });
      await self.store.enableTotp(personId, self.seconds(), step);
      const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
      await self.store.replaceRecoveryCodes(
        personId,
        codes.map((c) => hashSecret(normalizeRecoveryCode(c))),
      );
      return { recoveryCodes: codes };
    });
  }

  /** Turns two-factor off (the password is required); the secret and recovery codes are deleted. */
  async disableTwoFactor(personId: string, password: string): Promise<void> {
    const person = await this.requirePerson(personId);
    if (!(await this.verifyPassword(String(password ?? ""), person.password_hash)))
      throw new DomainError("unauthorized", "The password is incorrect.", { param: "password" });
    await this.atomic(async (self) => {
      await self.store.setTotpSecret(personId, null);
      await self.store.replaceRecoveryCodes(personId, []);
    });
  }

  // --- accounts and members -----------------------------------------------------------------

  async accountsOf(
    personId: string,
  ): Promise<{ accountId: string; name: string; currency: Currency; role: Role }[]> {
    return (await this.store.accountsOf(personId)).map((m) => ({
      accountId: m.account_id,
      name: m.name,
      currency: m.currency,
      role: m.role,
    }));
  }

  async listMembers(accountId: string, tx?: Sql): Promise<MemberView[]> {
    const store = tx ? this.store.in(tx) : this.store;
    return (await store.membersOf(accountId)).map((m) => ({
      personId: m.person_id,
      email: m.email,
      role: m.role,
      createdAt: Number(m.created_at),
      twoFactor: m.totp_enabled_at !== null,
    }));
  }

  /** Owners act on members; anyone may leave. `by`'s role is read again here, not trusted from the session. */
  private async requireOwnerOrSelf(
    accountId: string,
    personId: string,
    by: ConsoleSession,
    allowSelf: boolean,
  ): Promise<void> {
    const mine = await this.store.membership(accountId, by.personId);
    if (!mine) throw new DomainError("not_found", "No such account.", { param: "account_id" });
    if (mine.role !== "owner" && !(allowSelf && personId === by.personId))
      throw new DomainError("forbidden", "Only the account's owners manage members.");
    if (!(await this.store.membership(accountId, personId)))
      throw new DomainError("not_found", "No such member.", { param: "person_id" });
  }

  /** Removes a member (owners; or a person leaving). The last owner cannot be removed. */
  async removeMember(accountId: string, personId: string, by: ConsoleSession): Promise<void> {
    await this.atomic(async (self) => {
      await self.requireOwnerOrSelf(accountId, personId, by, true);
      if (!(await self.store.removeMembership(accountId, personId)))
        throw new DomainError("conflict", "An account keeps at least one owner.", { param: "person_id" });
    });
  }

  /** Changes a member's role (owners). The last owner cannot be demoted. */
  async setRole(accountId: string, personId: string, role: Role, by: ConsoleSession): Promise<void> {
    if (role !== "owner" && role !== "member")
      throw new DomainError("validation_error", 'The role must be "owner" or "member".', { param: "role" });
    await this.atomic(async (self) => {
      await self.requireOwnerOrSelf(accountId, personId, by, false);
      if (!(await self.store.setRole(accountId, personId, role)))
        throw new DomainError("conflict", "An account keeps at least one owner.", { param: "role" });
    });
  }

  /** A person by email (operator commands), or null. */
  async findPerson(email: string): Promise<PersonRow | null> {
    return await this.store.personByEmail(normalizeEmail(email));
  }
}
