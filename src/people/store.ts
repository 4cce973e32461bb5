import type { Currency } from "../accounts/store.ts";
import type { Sql } from "../db/sql.ts";
import { SqlStore } from "../db/store.ts";
import type { Role } from "./types.ts";

/**
 * The people tables (migration 009): people, memberships, invites, password_resets, sessions,
 * recovery_codes and signin_failures. Prepared SQL only; every one-time secret (invite, reset,
 * recovery code) is consumed by a compare-and-swap update, so two concurrent uses cannot both win.
 * Times are epoch seconds except signin_failures.at_ms. Secrets arrive here already hashed.
 */
export interface PersonRow {
  id: string;
  email: string;
  password_hash: string | null;
  operator: bigint;
  totp_secret: string | null;
  totp_enabled_at: bigint | null;
  totp_last_step: bigint | null;
  created_at: bigint;
  password_changed_at: bigint | null;
  disabled_at: bigint | null;
  /** The operator's reason for disabling (migration 023), kept while disabled. */
  disabled_reason: string | null;
}

export interface MembershipRow {
  account_id: string;
  person_id: string;
  role: Role;
  created_at: bigint;
}

export interface AccountMembershipRow extends MembershipRow {
  name: string;
  currency: Currency;
}

export interface MemberRow extends MembershipRow {
  email: string;
  totp_enabled_at: bigint | null;
}

export interface InviteRow {
  id: string;
  token_hash: Uint8Array;
  email: string | null;
  account_id: string | null;
  role: Role;
  operator: bigint;
  created_by: string | null;
  created_at: bigint;
  expires_at: bigint;
  used_at: bigint | null;
  used_by: string | null;
  revoked_at: bigint | null;
}

export interface SessionRow {
  id: string;
  token_hash: Uint8Array;
  person_id: string;
  account_id: string | null;
  csrf_token: string;
  created_at: bigint;
  last_seen_at: bigint;
  expires_at: bigint;
  revoked_at: bigint | null;
  user_agent: string | null;
  ip: string | null;
  /** A one-time notice for the console to show after a redirect (JSON), or null. */
  flash: string | null;
}

export interface ResetRow {
  token_hash: Uint8Array;
  person_id: string;
  created_at: bigint;
  expires_at: bigint;
  used_at: bigint | null;
}

export class PeopleStore extends SqlStore {
  protected override s = {
    personByEmail: this.q<PersonRow, [string]>("SELECT * FROM people WHERE email = ?"),
    personById: this.q<PersonRow, [string]>("SELECT * FROM people WHERE id = ?"),
    sessionByHash: this.q<SessionRow, [Uint8Array]>("SELECT * FROM sessions WHERE token_hash = ?"),
    touchSession: this.q("UPDATE sessions SET last_seen_at = ? WHERE id = ? AND last_seen_at < ?"),
    membership: this.q<MembershipRow, [string, string]>(
      "SELECT * FROM memberships WHERE account_id = ? AND person_id = ?",
    ),
    countFailures: this.q<{ n: bigint; oldest: bigint | null }, [string, number]>(
      "SELECT count(*) AS n, min(at_ms) AS oldest FROM signin_failures WHERE subject = ? AND at_ms > ?",
    ),
    insertFailure: this.q("INSERT INTO signin_failures (subject, at_ms) VALUES (?, ?)"),
  };

  constructor(sql: Sql) {
    super(sql);
  }

  /** Memberships created in the same second: insertion order (SQLite's rowid), the key on PostgreSQL. */
  private tie(alias: string | null): string {
    const a = alias ? `${alias}.` : "";
    return this.sql.dialect === "postgres" ? `${a}account_id, ${a}person_id` : `${a}rowid`;
  }

  // --- people -------------------------------------------------------------------------------

  async personByEmail(email: string): Promise<PersonRow | null> {
    return await this.s.personByEmail.get(email);
  }

  async personById(id: string): Promise<PersonRow | null> {
    return await this.s.personById.get(id);
  }

  async insertPerson(p: {
    id: string;
    email: string;
    passwordHash: string | null;
    operator: boolean;
    now: number;
  }): Promise<void> {
    await this.q(
      "INSERT INTO people (id, email, password_hash, operator, created_at, password_changed_at) VALUES (?, ?, ?, ?, ?, ?)",
    ).run(p.id, p.email, p.passwordHash, p.operator ? 1 : 0, p.now, p.passwordHash === null ? null : p.now);
  }

  async setPassword(personId: string, passwordHash: string, now: number): Promise<void> {
    await this.q("UPDATE people SET password_hash = ?, password_changed_at = ? WHERE id = ?").run(
      passwordHash,
      now,
      personId,
    );
  }

  async setOperator(personId: string): Promise<void> {
    await this.q("UPDATE people SET operator = 1 WHERE id = ?").run(personId);
  }

  /** A pending secret (two-factor not yet on), or null to turn two-factor off. */
  async setTotpSecret(personId: string, secret: string | null): Promise<void> {
    await this.q(
      "UPDATE people SET totp_secret = ?, totp_enabled_at = NULL, totp_last_step = NULL WHERE id = ?",
    ).run(secret, personId);
  }

  async enableTotp(personId: string, now: number, step: number): Promise<void> {
    await this.q("UPDATE people SET totp_enabled_at = ?, totp_last_step = ? WHERE id = ?").run(
      now,
      step,
      personId,
    );
  }

  /** Records `step` as used; false when it (or a later step) was already used: a replay. */
  async useTotpStep(personId: string, step: number): Promise<boolean> {
    return (
      (
        await this.q(
          "UPDATE people SET totp_last_step = ? WHERE id = ? AND (totp_last_step IS NULL OR totp_last_step < ?)",
        ).run(step, personId, step)
      ).changes === 1
    );
  }

  /** Oldest first; `after` is the last id of the previous page. */
  async listPeople(limit: number, after: string | null): Promise<PersonRow[]> {
    return await this.q<PersonRow, [string, number]>(
      // PostgreSQL has no rowid: person ids are time-ordered (ties within one ms may order differently).
      this.sql.dialect === "postgres"
        ? "SELECT * FROM people WHERE id > ? ORDER BY id LIMIT ?"
        : `SELECT * FROM people WHERE rowid > coalesce((SELECT rowid FROM people WHERE id = ?), 0)
         ORDER BY rowid LIMIT ?`,
    ).all(after ?? "", limit);
  }

  // --- memberships --------------------------------------------------------------------------

  async membership(accountId: string, personId: string): Promise<MembershipRow | null> {
    return await this.s.membership.get(accountId, personId);
  }

  /** Adds the person to the account; an existing membership is kept as it is (false). */
  async addMembership(accountId: string, personId: string, role: Role, now: number): Promise<boolean> {
    return (
      (
        await this.q(
          "INSERT INTO memberships (account_id, person_id, role, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
        ).run(accountId, personId, role, now)
      ).changes === 1
    );
  }

  /** The person's accounts, oldest membership first; an account an operator disabled is left out. */
  async accountsOf(personId: string): Promise<AccountMembershipRow[]> {
    return await this.q<AccountMembershipRow, [string]>(
      `SELECT m.*, a.name, a.currency FROM memberships m JOIN accounts a ON a.id = m.account_id
         WHERE m.person_id = ? AND a.disabled_at IS NULL ORDER BY m.created_at, ${this.tie("m")}`,
    ).all(personId);
  }

  /** The membership, if its account is not disabled: what a session may look at. */
  async liveMembership(accountId: string, personId: string): Promise<MembershipRow | null> {
    return await this.q<MembershipRow, [string, string]>(
      `SELECT m.* FROM memberships m JOIN accounts a ON a.id = m.account_id
         WHERE m.account_id = ? AND m.person_id = ? AND a.disabled_at IS NULL`,
    ).get(accountId, personId);
  }

  /**
   * An operator disables (with a reason) or enables (null) a person. Disabling twice keeps the
   * first time and the new reason. False: no such person.
   */
  async setPersonDisabled(personId: string, reason: string | null, now: number): Promise<boolean> {
    const result =
      reason === null
        ? await this.q("UPDATE people SET disabled_at = NULL, disabled_reason = NULL WHERE id = ?").run(
            personId,
          )
        : await this.q(
            "UPDATE people SET disabled_at = coalesce(disabled_at, ?), disabled_reason = ? WHERE id = ?",
          ).run(now, reason, personId);
    return result.changes === 1;
  }

  async membersOf(accountId: string): Promise<MemberRow[]> {
    return await this.q<MemberRow, [string]>(
      `SELECT m.*, p.email, p.totp_enabled_at FROM memberships m JOIN people p ON p.id = m.person_id
         WHERE m.account_id = ? ORDER BY m.created_at, ${this.tie("m")}`,
    ).all(accountId);
  }

  async countOwners(accountId: string): Promise<number> {
    return Number(
      (await this.q<{ n: bigint }, [string]>(
        "SELECT count(*) AS n FROM memberships WHERE account_id = ? AND role = 'owner'",
      ).get(accountId))!.n,
    );
  }

  /**
   * Changes a role; demoting an owner only while another owner remains (checked by the update
   * itself, so two owners demoting each other at once cannot leave the account without one).
   */
  async setRole(accountId: string, personId: string, role: Role): Promise<boolean> {
    return (
      (
        await this.q(
          `UPDATE memberships SET role = ?1 WHERE account_id = ?2 AND person_id = ?3
             AND (?1 = 'owner' OR role = 'member'
                  OR (SELECT count(*) FROM memberships WHERE account_id = ?2 AND role = 'owner') > 1)`,
        ).run(role, accountId, personId)
      ).changes === 1
    );
  }

  /** Removes a membership; an owner only while another owner remains (same rule as setRole). */
  async removeMembership(accountId: string, personId: string): Promise<boolean> {
    return (
      (
        await this.q(
          `DELETE FROM memberships WHERE account_id = ?1 AND person_id = ?2
             AND (role = 'member' OR (SELECT count(*) FROM memberships WHERE account_id = ?1 AND role = 'owner') > 1)`,
        ).run(accountId, personId)
      ).changes === 1
    );
  }

  async membershipsByPeople(personIds: string[]): Promise<MembershipRow[]> {
    if (personIds.length === 0) return [];
    return await this.q<MembershipRow, string[]>(
      `SELECT * FROM memberships WHERE person_id IN (${personIds.map(() => "?").join(",")}) ORDER BY created_at, ${this.tie(null)}`,
    ).all(...personIds);
  }

  // --- invites ------------------------------------------------------------------------------

  async insertInvite(i: {
    id: string;
    tokenHash: Uint8Array;
    email: string | null;
    accountId: string | null;
    role: Role;
    operator: boolean;
    createdBy: string | null;
    now: number;
    expiresAt: number;
  }): Promise<void> {
    await this.q(
      `INSERT INTO invites (id, token_hash, email, account_id, role, operator, created_by, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      i.id,
      i.tokenHash,
      i.email,
      i.accountId,
      i.role,
      i.operator ? 1 : 0,
      i.createdBy,
      i.now,
      i.expiresAt,
    );
  }

  async inviteByHash(tokenHash: Uint8Array): Promise<InviteRow | null> {
    return await this.q<InviteRow, [Uint8Array]>("SELECT * FROM invites WHERE token_hash = ?").get(tokenHash);
  }

  /** Compare-and-swap: marks a live invite used; null when it is unknown, used, revoked or expired. */
  async consumeInvite(tokenHash: Uint8Array, personId: string, now: number): Promise<InviteRow | null> {
    return await this.q<InviteRow, [number, string, Uint8Array, number]>(
      `UPDATE invites SET used_at = ?1, used_by = ?2
         WHERE token_hash = ?3 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?4 RETURNING *`,
    ).get(now, personId, tokenHash, now);
  }

  /** Newest first; `after` is the last id of the previous page. */
  async listInvites(limit: number, after: string | null): Promise<InviteRow[]> {
    return await this.q<InviteRow, [string, number]>(
      // PostgreSQL has no rowid: invite ids are time-ordered (ties within one ms may order differently).
      this.sql.dialect === "postgres"
        ? "SELECT * FROM invites WHERE (?1 = '' OR id < ?1) ORDER BY id DESC LIMIT ?2"
        : `SELECT * FROM invites WHERE rowid < coalesce((SELECT rowid FROM invites WHERE id = ?1), 9223372036854775807)
         ORDER BY rowid DESC LIMIT ?2`,
    ).all(after ?? "", limit);
  }

  /** Revokes an unused invite; false when it is unknown or already used. */
  async revokeInvite(id: string, now: number): Promise<InviteRow | null> {
    return await this.q<InviteRow, [number, string]>(
      "UPDATE invites SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? AND used_at IS NULL RETURNING *",
    ).get(now, id);
  }

  async inviteById(id: string): Promise<InviteRow | null> {
    return await this.q<InviteRow, [string]>("SELECT * FROM invites WHERE id = ?").get(id);
  }

  // --- password resets ----------------------------------------------------------------------

  async insertReset(tokenHash: Uint8Array, personId: string, now: number, expiresAt: number): Promise<void> {
    await this.q(
      "INSERT INTO password_resets (token_hash, person_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
    ).run(tokenHash, personId, now, expiresAt);
  }

  /** Reset links made for the person since `since` (epoch seconds): the forgot page's mail limit. */
  async countResetsSince(personId: string, since: number): Promise<number> {
    const row = (await this.q<{ n: bigint }, [string, number]>(
      "SELECT count(*) AS n FROM password_resets WHERE person_id = ? AND created_at >= ?",
    ).get(personId, since))!;
    return Number(row.n);
  }

  async resetByHash(tokenHash: Uint8Array): Promise<ResetRow | null> {
    return await this.q<ResetRow, [Uint8Array]>("SELECT * FROM password_resets WHERE token_hash = ?").get(
      tokenHash,
    );
  }

  /** Compare-and-swap: marks a live reset used; null when unknown, used or expired. */
  async consumeReset(tokenHash: Uint8Array, now: number): Promise<ResetRow | null> {
    return await this.q<ResetRow, [number, Uint8Array, number]>(
      "UPDATE password_resets SET used_at = ?1 WHERE token_hash = ?2 AND used_at IS NULL AND expires_at > ?3 RETURNING *",
    ).get(now, tokenHash, now);
  }

  /** Older unused links of the person stop working once a newer one is used or a password is set. */
  async expireResetsOf(personId: string, now: number): Promise<void> {
    await this.q("UPDATE password_resets SET used_at = ? WHERE person_id = ? AND used_at IS NULL").run(
      now,
      personId,
    );
  }

  // --- sessions -----------------------------------------------------------------------------

  async insertSession(s: {
    id: string;
    tokenHash: Uint8Array;
    personId: string;
    accountId: string | null;
    csrfToken: string;
    now: number;
    expiresAt: number;
    userAgent: string | null;
    ip: string | null;
  }): Promise<void> {
    await this.q(
      `INSERT INTO sessions (id, token_hash, person_id, account_id, csrf_token, created_at, last_seen_at,
           expires_at, user_agent, ip) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      s.id,
      s.tokenHash,
      s.personId,
      s.accountId,
      s.csrfToken,
      s.now,
      s.now,
      s.expiresAt,
      s.userAgent,
      s.ip,
    );
  }

  async sessionByHash(tokenHash: Uint8Array): Promise<SessionRow | null> {
    return await this.s.sessionByHash.get(tokenHash);
  }

  async sessionById(id: string): Promise<SessionRow | null> {
    return await this.q<SessionRow, [string]>("SELECT * FROM sessions WHERE id = ?").get(id);
  }

  /** Moves last_seen_at forward only when it is older than `before` (at most one write a minute). */
  async touchSession(id: string, now: number, before: number): Promise<void> {
    await this.s.touchSession.run(now, id, before);
  }

  async setSessionFlash(id: string, flash: string): Promise<void> {
    await this.q("UPDATE sessions SET flash = ? WHERE id = ? AND revoked_at IS NULL").run(flash, id);
  }

  /**
   * Reads and clears the session's flash. The clear is conditional on the value read (RETURNING
   * would give the cleared NULL): of two tabs loading at once, only the one that cleared shows it.
   */
  async takeSessionFlash(id: string): Promise<string | null> {
    const row = await this.q<{ flash: string | null }, [string]>(
      "SELECT flash FROM sessions WHERE id = ?",
    ).get(id);
    if (!row?.flash) return null;
    const cleared = await this.q("UPDATE sessions SET flash = NULL WHERE id = ? AND flash = ?").run(
      id,
      row.flash,
    );
    return cleared.changes === 1 ? row.flash : null;
  }

  async setSessionAccount(id: string, personId: string, accountId: string): Promise<boolean> {
    return (
      (
        await this.q(
          "UPDATE sessions SET account_id = ? WHERE id = ? AND person_id = ? AND revoked_at IS NULL",
        ).run(accountId, id, personId)
      ).changes === 1
    );
  }

  async revokeSession(id: string, now: number, personId?: string): Promise<boolean> {
    const sql =
      personId === undefined
        ? "UPDATE sessions SET revoked_at = ?1 WHERE id = ?2 AND revoked_at IS NULL"
        : "UPDATE sessions SET revoked_at = ?1 WHERE id = ?2 AND revoked_at IS NULL AND person_id = ?3";
    const args: [number, string, ...string[]] = personId === undefined ? [now, id] : [now, id, personId];
    return (await this.q(sql).run(...args)).changes === 1;
  }

  /** Revokes every live session of the person except `exceptId`; returns how many. */
  async revokeSessionsOf(personId: string, now: number, exceptId: string | null): Promise<number> {
    return (
      await this.q(
        "UPDATE sessions SET revoked_at = ? WHERE person_id = ? AND revoked_at IS NULL AND id != ?",
      ).run(now, personId, exceptId ?? "")
    ).changes;
  }

  /** Revokes every live session looking at the account (an operator disabled it); returns how many. */
  async revokeSessionsViewing(accountId: string, now: number, exceptId: string | null): Promise<number> {
    return (
      await this.q(
        "UPDATE sessions SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL AND id != ?",
      ).run(now, accountId, exceptId ?? "")
    ).changes;
  }

  async liveSessionsOf(personId: string, now: number, idleSince: number): Promise<SessionRow[]> {
    return await this.q<SessionRow, [string, number, number]>(
      `SELECT * FROM sessions WHERE person_id = ? AND revoked_at IS NULL AND expires_at > ? AND last_seen_at > ?
         ORDER BY last_seen_at DESC`,
    ).all(personId, now, idleSince);
  }

  // --- recovery codes -----------------------------------------------------------------------

  async replaceRecoveryCodes(personId: string, hashes: Uint8Array[]): Promise<void> {
    await this.q("DELETE FROM recovery_codes WHERE person_id = ?").run(personId);
    const insert = this.q("INSERT INTO recovery_codes (person_id, code_hash) VALUES (?, ?)");
    for (const h of hashes) await insert.run(personId, h);
  }

  /** Compare-and-swap: true once per code. */
  async useRecoveryCode(personId: string, codeHash: Uint8Array, now: number): Promise<boolean> {
    return (
      (
        await this.q(
          "UPDATE recovery_codes SET used_at = ? WHERE person_id = ? AND code_hash = ? AND used_at IS NULL",
        ).run(now, personId, codeHash)
      ).changes === 1
    );
  }

  async unusedRecoveryCodes(personId: string): Promise<number> {
    return Number(
      (await this.q<{ n: bigint }, [string]>(
        "SELECT count(*) AS n FROM recovery_codes WHERE person_id = ? AND used_at IS NULL",
      ).get(personId))!.n,
    );
  }

  // --- sign-in failures ---------------------------------------------------------------------

  /** Failures of `subject` after `sinceMs`, and the oldest of them (when the window frees up). */
  async failures(subject: string, sinceMs: number): Promise<{ count: number; oldestMs: number | null }> {
    const row = (await this.s.countFailures.get(subject, sinceMs))!;
    return { count: Number(row.n), oldestMs: row.oldest === null ? null : Number(row.oldest) };
  }

  async recordFailure(subjects: string[], atMs: number, pruneBeforeMs: number): Promise<void> {
    return await this.atomic(async (self) => {
      for (const s of subjects) await self.s.insertFailure.run(s, atMs);
      await self.q("DELETE FROM signin_failures WHERE at_ms <= ?").run(pruneBeforeMs);
    });
  }

  async clearFailures(subject: string): Promise<void> {
    await this.q("DELETE FROM signin_failures WHERE subject = ?").run(subject);
  }
}
