import { digestsEqual, hashSecret } from "../lib/api-keys.ts";
import { DomainError } from "../lib/errors.ts";
import {
  LINK_INVALID,
  newToken,
  normalizeEmail,
  type PeopleCore,
  type PeopleNotifier,
  PeopleServiceBase,
  tokenShaped,
} from "./common.ts";
import type { Passwords } from "./passwords.ts";
import { RESET_TTL_SECONDS } from "./types.ts";

/** The forgot-password page mails at most this many reset links per person per hour. */
export const FORGOT_MAILS_PER_HOUR = 3;

export interface ResetDeps extends PeopleCore {
  publicUrl: string;
  passwords: Passwords;
  /** Mails reset links when [smtp] is set; null: nothing is mailed. */
  notify: PeopleNotifier | null;
}

/**
 * Password resets (one-time links, 1 hour) and password changes: each sets a new password and
 * revokes the person's other sessions.
 */
export class ResetService extends PeopleServiceBase {
  private readonly publicUrl: string;
  private readonly passwords: Passwords;
  private readonly notify: PeopleNotifier | null;

  constructor(deps: ResetDeps) {
    super(deps);
    this.publicUrl = deps.publicUrl;
    this.passwords = deps.passwords;
    this.notify = deps.notify;
  }

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
    if (!tokenShaped(token)) return false;
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
    this.passwords.checkNew(password);
    if (!(await this.resetLinkValid(token)))
      throw new DomainError("not_found", LINK_INVALID, { param: "token" });
    const hash = await this.passwords.hash(password);
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
    if (!(await this.passwords.verify(String(current ?? ""), person.password_hash)))
      throw new DomainError("unauthorized", "The current password is incorrect.", {
        param: "current_password",
      });
    this.passwords.checkNew(next, "new_password");
    const hash = await this.passwords.hash(next);
    await this.atomic(async (self) => {
      const now = self.seconds();
      await self.store.setPassword(personId, hash, now);
      await self.store.expireResetsOf(personId, now);
      await self.store.revokeSessionsOf(personId, now, keepSessionId);
    });
  }
}
