import { digestsEqual, hashSecret } from "../lib/api-keys.ts";
import { DomainError } from "../lib/errors.ts";
import { newId } from "../lib/ids.ts";
import { newToken, PeopleServiceBase, tokenShaped } from "./common.ts";
import type { PersonRow, SessionRow } from "./store.ts";
import {
  type ClientInfo,
  type ConsoleSession,
  type NewSession,
  type Role,
  SESSION_ABSOLUTE_SECONDS,
  SESSION_IDLE_SECONDS,
} from "./types.ts";

/** A flash older than this is not shown: a secret is not left waiting in the database. */
const FLASH_SECONDS = 600;

/** last_seen_at is written at most once a minute per session. */
const TOUCH_EVERY_SECONDS = 60;

export interface SessionView {
  id: string;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
  userAgent: string | null;
  ip: string | null;
}

/**
 * Console sessions: opened by sign-in (src/people/sign-in.ts), resolved from the cookie at each
 * request (idle 12 h, absolute 30 days), listed, switched between accounts and revoked.
 */
export class SessionService extends PeopleServiceBase {
  private async consoleSession(row: SessionRow, person: PersonRow): Promise<ConsoleSession> {
    let accountId = row.account_id;
    let role: Role | null = null;
    const m = accountId ? await this.store.liveMembership(accountId, person.id) : null;
    if (m) role = m.role;
    else {
      // Removed from the account being looked at, or an operator disabled it: fall back to the
      // first (enabled) account left, if any.
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

  /** A new session of a person who just proved who they are (on `accountId`, else their first). */
  async openSession(
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
    if (!tokenShaped(token)) return null;
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

  async signOut(sessionId: string): Promise<void> {
    await this.store.revokeSession(sessionId, this.seconds());
  }

  /** Revokes every session of the person (but `exceptSessionId`); returns how many. */
  async signOutEverywhere(personId: string, exceptSessionId?: string): Promise<number> {
    return await this.store.revokeSessionsOf(personId, this.seconds(), exceptSessionId ?? null);
  }

  /**
   * Ends every session looking at the account (an operator disabled it): their next console
   * request is signed out. Resolving a session also never lands on a disabled account.
   */
  async endAccountSessions(accountId: string, exceptSessionId: string | null = null): Promise<number> {
    return await this.store.revokeSessionsViewing(accountId, this.seconds(), exceptSessionId);
  }

  /** Points the session at another account of the person; another account is 404. */
  async switchAccount(sessionId: string, personId: string, accountId: string): Promise<ConsoleSession> {
    return await this.atomic(async (self) => {
      if (!(await self.store.liveMembership(accountId, personId)))
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

  /**
   * A one-time notice for the next page this session loads (post/redirect/get: the new key or
   * invite link is shown by the page the redirect leads to, and reloading it shows nothing and
   * creates nothing). One at a time: a newer one replaces it.
   */
  async setFlash(sessionId: string, kind: string, data: unknown): Promise<void> {
    await this.store.setSessionFlash(sessionId, JSON.stringify({ kind, at: this.seconds(), data }));
  }

  /** The session's notice of this kind, cleared as it is read; null when none, another kind or stale. */
  async takeFlash<T>(sessionId: string, kind: string): Promise<T | null> {
    const flash = await this.takeFlashEntry<T>(sessionId);
    return flash && flash.kind === kind ? flash.data : null;
  }

  /** The session's notice whatever its kind (a page that shows several kinds), cleared as it is read. */
  async takeFlashEntry<T>(sessionId: string): Promise<{ kind: string; data: T } | null> {
    const text = await this.store.takeSessionFlash(sessionId);
    if (text === null) return null;
    const flash = JSON.parse(text) as { kind: string; at: number; data: T };
    if (this.seconds() - flash.at > FLASH_SECONDS) return null;
    return { kind: flash.kind, data: flash.data };
  }

  /** Revokes one of the person's sessions; another person's session id is 404. */
  async revokeSession(personId: string, sessionId: string): Promise<void> {
    if (!(await this.store.revokeSession(sessionId, this.seconds(), personId)))
      throw new DomainError("not_found", "No such session.", { param: "session_id" });
  }
}
