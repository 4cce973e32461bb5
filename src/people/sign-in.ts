import type { AccountStore } from "../accounts/store.ts";
import type { ConsoleSettings } from "../config/schema.ts";
import { SqlConstraintError } from "../db/sql.ts";
import { DomainError } from "../lib/errors.ts";
import { newTimeOrderedId } from "../lib/ids.ts";
import {
  checkEmail,
  EMAIL_MAX_LENGTH,
  LINK_INVALID,
  normalizeEmail,
  type PeopleCore,
  PeopleServiceBase,
  SIGNIN_FAILED,
} from "./common.ts";
import type { InviteService } from "./invites.ts";
import type { Passwords } from "./passwords.ts";
import type { SessionService } from "./sessions.ts";
import type { InviteRow, PersonRow } from "./store.ts";
import type { SignInThrottle } from "./throttle.ts";
import type { TwoFactorService } from "./two-factor.ts";
import type { ClientInfo, NewSession } from "./types.ts";

export interface SignInDeps extends PeopleCore {
  accounts: AccountStore;
  /** The live [console] settings (sign-up mode, new accounts' currency), read at each call. */
  console: () => Pick<ConsoleSettings, "signup" | "currency">;
  passwords: Passwords;
  throttle: SignInThrottle;
  /** Opens the session, inside the sign-up's transaction (bound with `in(tx)`). */
  sessions: SessionService;
  invites: Pick<InviteService, "usableInvite">;
  twoFactor: Pick<TwoFactorService, "checkCode">;
}

/**
 * What opens a session from credentials: sign-in (email, password, then the second factor),
 * sign-up and accepting an invite. Unknown email, wrong password and a person who cannot sign in
 * all give the same `unauthorized` with the same message, after the same argon2 work, and count
 * against the throttle (src/people/throttle.ts).
 */
export class SignInService extends PeopleServiceBase {
  private readonly accounts: AccountStore;
  private readonly console: () => Pick<ConsoleSettings, "signup" | "currency">;
  private readonly passwords: Passwords;
  private readonly throttle: SignInThrottle;
  private readonly sessions: SessionService;
  private readonly invites: Pick<InviteService, "usableInvite">;
  private readonly twoFactor: Pick<TwoFactorService, "checkCode">;
  protected override readonly boundFields = ["accounts", "sessions"];

  constructor(deps: SignInDeps) {
    super(deps);
    this.accounts = deps.accounts;
    this.console = deps.console;
    this.passwords = deps.passwords;
    this.throttle = deps.throttle;
    this.sessions = deps.sessions;
    this.invites = deps.invites;
    this.twoFactor = deps.twoFactor;
  }

  /**
   * Email and password, then the second factor when the person has one. A missing or wrong code
   * after a right password is `unauthorized` with param "code".
   */
  async signIn(
    input: { email: string; password: string; code?: string | null },
    client: ClientInfo,
  ): Promise<NewSession> {
    const email = normalizeEmail(String(input.email ?? ""));
    const subjects = this.throttle.subjects(email, client);
    await this.throttle.check(subjects);
    const person = email.length <= EMAIL_MAX_LENGTH ? await this.store.personByEmail(email) : null;
    const usable = person !== null && person.disabled_at === null ? person.password_hash : null;
    const ok = await this.passwords.verify(String(input.password ?? ""), usable);
    if (!ok || !person) return await this.throttle.fail(subjects);
    if (person.totp_enabled_at !== null) await this.requireSecondFactor(person, input.code, subjects);
    await this.throttle.clear(subjects);
    return this.sessions.openSession(person, client);
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
    if (!(await this.twoFactor.checkCode(person, c)))
      await this.throttle.fail(subjects, "code", "The code is incorrect or was already used.");
  }

  /** A unique account name derived from the email ("ann@example.com", then "ann@example.com (2)"...). */
  private async accountNameFor(email: string): Promise<string> {
    for (let n = 1; ; n++) {
      const name = n === 1 ? email : `${email} (${n})`;
      if (!(await this.accounts.findAccountByName(name))) return name;
    }
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
    const email = checkEmail(String(input.email ?? ""));
    const mode = this.console().signup;
    let invite: InviteRow | null = null;
    if (input.invite) {
      invite = await this.invites.usableInvite(input.invite);
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
    this.passwords.checkNew(input.password);
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
    const invite = await this.invites.usableInvite(token);
    let who = invite.email;
    if (who === null) {
      if (!email) throw new DomainError("validation_error", "Enter your email address.", { param: "email" });
      who = checkEmail(email);
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
    const subjects = this.throttle.subjects(o.email, o.client);
    let existing = await this.store.personByEmail(o.email);
    if (existing) {
      // Only the person themselves: their current password (throttled like a sign-in).
      await this.throttle.check(subjects);
      const ok =
        existing.disabled_at === null && (await this.passwords.verify(o.password, existing.password_hash));
      if (!ok) await this.throttle.fail(subjects);
      // The password alone never opens a session for a person with two-factor on.
      if (existing.totp_enabled_at !== null) await this.requireSecondFactor(existing, o.code, subjects);
    } else {
      this.passwords.checkNew(o.password);
    }
    const passwordHash = existing ? null : await this.passwords.hash(o.password);
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
      return { session: await self.sessions.openSession(person, o.client, accountId), accountId, keyId, key };
    });
    await this.throttle.clear(subjects);
    return result;
  }
}
