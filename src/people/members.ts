import type { Currency } from "../accounts/store.ts";
import type { Sql } from "../db/sql.ts";
import { DomainError } from "../lib/errors.ts";
import { normalizeEmail, PeopleServiceBase } from "./common.ts";
import type { PersonRow } from "./store.ts";
import type { ConsoleSession, Role } from "./types.ts";

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
  /** The operator's reason while disabled, else null. */
  disabledReason: string | null;
  memberships: { accountId: string; role: Role }[];
}

/**
 * Memberships (a person's accounts, an account's members, roles, removal) and the operator's
 * list of people. An account keeps at least one owner (the store's conditional updates).
 */
export class MemberService extends PeopleServiceBase {
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

  /** One member of the account, or null. */
  async getMember(accountId: string, personId: string): Promise<MemberView | null> {
    return (await this.listMembers(accountId)).find((m) => m.personId === personId) ?? null;
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

  async listPeople(options: { limit?: number; after?: string | null } = {}): Promise<PersonView[]> {
    return await this.viewsOf(await this.store.listPeople(options.limit ?? 100, options.after ?? null));
  }

  /** One person as the operator lists them, or 404. */
  async getPerson(personId: string): Promise<PersonView> {
    const [view] = await this.viewsOf([await this.requirePerson(personId)]);
    return view!;
  }

  private async viewsOf(rows: PersonRow[]): Promise<PersonView[]> {
    const memberships = await this.store.membershipsByPeople(rows.map((p) => p.id));
    return rows.map((p) => ({
      id: p.id,
      email: p.email,
      operator: p.operator === 1n,
      twoFactor: p.totp_enabled_at !== null,
      hasPassword: p.password_hash !== null,
      createdAt: Number(p.created_at),
      disabledAt: p.disabled_at === null ? null : Number(p.disabled_at),
      disabledReason: p.disabled_reason,
      memberships: memberships
        .filter((m) => m.person_id === p.id)
        .map((m) => ({ accountId: m.account_id, role: m.role })),
    }));
  }

  /**
   * An operator disables a person (`reason`, already checked) or enables them (null). Disabling
   * ends every session of theirs in the same transaction, in every account; sign-in refuses them
   * like a wrong password (no enumeration). Unknown ids are 404.
   */
  async setDisabled(personId: string, reason: string | null): Promise<PersonView> {
    return await this.atomic(async (self) => {
      if (!(await self.store.setPersonDisabled(personId, reason, self.seconds())))
        throw new DomainError("not_found", "No such person.", { param: "person_id" });
      if (reason !== null) await self.store.revokeSessionsOf(personId, self.seconds(), null);
      return await self.getPerson(personId);
    });
  }

  /** A person by email (operator commands), or null. */
  async findPerson(email: string): Promise<PersonRow | null> {
    return await this.store.personByEmail(normalizeEmail(email));
  }
}
