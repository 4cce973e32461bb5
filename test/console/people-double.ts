/**
 * TEMPORARY test double of the PeopleService, used only until branch c15-people (the real
 * src/people/service.ts) is merged into main: then delete this file and the one call to
 * installPeopleDouble in ./helpers.ts, and the tests run against ctx.people unchanged.
 * It follows the API of CONSOLE-PLAN.md and the real service's error codes (unauthorized with
 * param "code" for the second factor, rate_limited with retryAfterSeconds, not_found for dead links).
 */
import { randomBytes } from "node:crypto";
import { DomainError } from "../../src/lib/errors.ts";
import type { ClientInfo, ConsoleSession, NewSession, Role } from "../../src/people/types.ts";
import {
  PASSWORD_MIN_LENGTH,
  SESSION_ABSOLUTE_SECONDS,
  SIGNIN_MAX_FAILURES,
  SIGNIN_WINDOW_SECONDS,
} from "../../src/people/types.ts";
import type { AppContext } from "../../src/server/context.ts";

const token = () => randomBytes(32).toString("base64url");

interface Person {
  id: string;
  email: string;
  password: string;
  operator: boolean;
  /** The one code the double accepts as a second factor, when two-factor is on. */
  totp: string | null;
}

interface Session {
  id: string;
  personId: string;
  accountId: string | null;
  csrf: string;
  expiresAt: number;
  revoked: boolean;
}

interface Invite {
  email: string | null;
  accountId: string | null;
  role: Role;
  operator: boolean;
  used: boolean;
}

export class PeopleDouble {
  people = new Map<string, Person>();
  byEmail = new Map<string, Person>();
  sessions = new Map<string, Session>();
  tokens = new Map<string, string>();
  memberships: { accountId: string; personId: string; role: Role }[] = [];
  invites = new Map<string, Invite>();
  resets = new Map<string, string>();
  failures = new Map<string, number>();

  constructor(private ctx: AppContext) {}

  private view(s: Session): ConsoleSession {
    const p = this.people.get(s.personId)!;
    const m = this.memberships.find((x) => x.personId === p.id && x.accountId === s.accountId);
    return {
      sessionId: s.id,
      personId: p.id,
      email: p.email,
      operator: p.operator,
      accountId: m ? s.accountId : null,
      role: m?.role ?? null,
      csrfToken: s.csrf,
      twoFactor: p.totp !== null,
    };
  }

  private open(p: Person, accountId?: string): NewSession {
    const t = token();
    const expiresAt = Math.floor(Date.now() / 1000) + SESSION_ABSOLUTE_SECONDS;
    const s: Session = {
      id: `sess_${token().slice(0, 12)}`,
      personId: p.id,
      accountId: accountId ?? this.memberships.find((m) => m.personId === p.id)?.accountId ?? null,
      csrf: token(),
      expiresAt,
      revoked: false,
    };
    this.sessions.set(s.id, s);
    this.tokens.set(t, s.id);
    return { token: t, session: this.view(s), expiresAt };
  }

  resolveSession(t: string, _client?: ClientInfo): ConsoleSession | null {
    const id = this.tokens.get(t);
    const s = id ? this.sessions.get(id) : undefined;
    if (!s || s.revoked || s.expiresAt <= Date.now() / 1000) return null;
    return this.view(s);
  }

  async signIn(input: { email: string; password: string; code?: string | null }, _client: ClientInfo) {
    const email = input.email.trim().toLowerCase();
    const fails = this.failures.get(email) ?? 0;
    if (fails >= SIGNIN_MAX_FAILURES)
      throw new DomainError("rate_limited", "Too many failed sign-ins.", {
        retryAfterSeconds: SIGNIN_WINDOW_SECONDS,
      });
    const p = this.byEmail.get(email);
    if (!p || p.password !== input.password) {
      this.failures.set(email, fails + 1);
      throw new DomainError("unauthorized", "The email or password is incorrect.");
    }
    if (p.totp !== null) {
      if (!input.code) throw new DomainError("unauthorized", "Enter the code.", { param: "code" });
      if (input.code !== p.totp) {
        this.failures.set(email, fails + 1);
        throw new DomainError("unauthorized", "The code is incorrect.", { param: "code" });
      }
    }
    this.failures.delete(email);
    return this.open(p);
  }

  signOut(sessionId: string): void {
    const s = this.sessions.get(sessionId);
    if (s) s.revoked = true;
  }

  switchAccount(sessionId: string, personId: string, accountId: string): ConsoleSession {
    const s = this.sessions.get(sessionId);
    if (!s || s.personId !== personId) throw new DomainError("not_found", "No such session.");
    if (!this.memberships.some((m) => m.personId === personId && m.accountId === accountId))
      throw new DomainError("not_found", "No such account.");
    s.accountId = accountId;
    return this.view(s);
  }

  private newPerson(email: string, password: string, operator: boolean): Person {
    if (password.length < PASSWORD_MIN_LENGTH)
      throw new DomainError(
        "validation_error",
        `The password must have at least ${PASSWORD_MIN_LENGTH} characters.`,
      );
    const p: Person = { id: `person_${token().slice(0, 12)}`, email, password, operator, totp: null };
    this.people.set(p.id, p);
    this.byEmail.set(email, p);
    return p;
  }

  private newAccount(p: Person) {
    const created = this.ctx.accounts.createAccount(`${p.email} ${token().slice(0, 6)}`, "USD");
    this.memberships.push({ accountId: created.account.id, personId: p.id, role: "owner" });
    return created;
  }

  async signUp(input: { email: string; password: string; invite?: string | null }, _client: ClientInfo) {
    const email = input.email.trim().toLowerCase();
    if (!/^[^@\s]+@[^@\s]+$/.test(email))
      throw new DomainError("validation_error", "Enter a valid email address.");
    const mode = this.ctx.live.console.signup;
    if (mode !== "open") {
      const inv = input.invite ? this.invites.get(input.invite) : undefined;
      if (!inv || inv.used) throw new DomainError("not_found", "This link is invalid, used or expired.");
      inv.used = true;
    }
    if (this.byEmail.has(email)) throw new DomainError("unauthorized", "The email or password is incorrect.");
    const p = this.newPerson(email, input.password, false);
    const created = this.newAccount(p);
    return {
      session: this.open(p, created.account.id),
      accountId: created.account.id,
      keyId: created.keyId,
      key: created.key,
    };
  }

  createInvite(input: { email?: string | null; accountId?: string | null; role?: Role; operator?: boolean }) {
    const t = token();
    this.invites.set(t, {
      email: input.email?.toLowerCase() ?? null,
      accountId: input.accountId ?? null,
      role: input.accountId ? (input.role ?? "member") : "owner",
      operator: input.operator === true,
      used: false,
    });
    const expiresAt = Math.floor(Date.now() / 1000) + 7 * 86400;
    return { url: `${this.ctx.publicUrl}/console/invite/${t}`, expiresAt, id: `inv_${t.slice(0, 8)}` };
  }

  inviteInfo(t: string) {
    const inv = this.invites.get(t);
    if (!inv || inv.used) return null;
    return {
      email: inv.email,
      accountName: inv.accountId ? (this.ctx.accounts.getAccount(inv.accountId)?.name ?? null) : null,
      role: inv.role,
      personExists: inv.email !== null && this.byEmail.has(inv.email),
    };
  }

  async acceptInvite(t: string, password: string, _client: ClientInfo, email?: string | null) {
    const inv = this.invites.get(t);
    if (!inv || inv.used) throw new DomainError("not_found", "This link is invalid, used or expired.");
    const who = inv.email ?? email?.trim().toLowerCase();
    if (!who) throw new DomainError("validation_error", "Enter your email address.");
    let p = this.byEmail.get(who);
    if (p && p.password !== password)
      throw new DomainError("unauthorized", "The email or password is incorrect.");
    p ??= this.newPerson(who, password, false);
    inv.used = true;
    if (inv.operator) p.operator = true;
    let key: string | null = null;
    let keyId: string | null = null;
    let accountId = inv.accountId;
    if (accountId) this.memberships.push({ accountId, personId: p.id, role: inv.role });
    else {
      const created = this.newAccount(p);
      accountId = created.account.id;
      key = created.key;
      keyId = created.keyId;
    }
    return { session: this.open(p, accountId), key, keyId };
  }

  requestPasswordReset(email: string): { url: string } | null {
    const p = this.byEmail.get(email.trim().toLowerCase());
    if (!p) return null;
    const t = token();
    this.resets.set(t, p.id);
    return { url: `${this.ctx.publicUrl}/console/reset/${t}` };
  }

  resetLinkValid(t: string): boolean {
    return this.resets.has(t);
  }

  async resetPassword(t: string, password: string) {
    if (password.length < PASSWORD_MIN_LENGTH)
      throw new DomainError(
        "validation_error",
        `The password must have at least ${PASSWORD_MIN_LENGTH} characters.`,
      );
    const personId = this.resets.get(t);
    if (!personId) throw new DomainError("not_found", "This link is invalid, used or expired.");
    this.resets.delete(t);
    this.people.get(personId)!.password = password;
    for (const s of this.sessions.values()) if (s.personId === personId) s.revoked = true;
  }

  accountsOf(personId: string) {
    return this.memberships
      .filter((m) => m.personId === personId)
      .map((m) => {
        const a = this.ctx.accounts.getAccount(m.accountId)!;
        return { accountId: m.accountId, name: a.name, currency: a.currency, role: m.role };
      });
  }

  /** Test-only: turn two-factor on with a fixed code (the real service: beginTwoFactor + enableTwoFactor). */
  enableTwoFactorForTest(email: string, code: string) {
    this.byEmail.get(email)!.totp = code;
  }
}

/** TEMPORARY: gives an in-process app the double as ctx.people when the real service is absent. */
export function installPeopleDouble(ctx: AppContext): void {
  const c = ctx as AppContext & { people?: unknown };
  if (!c.people) c.people = new PeopleDouble(ctx);
}
