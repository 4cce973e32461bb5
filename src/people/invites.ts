import type { AccountStore } from "../accounts/store.ts";
import type { ConsoleSettings } from "../config/schema.ts";
import { digestsEqual, hashSecret } from "../lib/api-keys.ts";
import { DomainError } from "../lib/errors.ts";
import { newTimeOrderedId } from "../lib/ids.ts";
import {
  checkEmail,
  LINK_INVALID,
  newToken,
  type PeopleCore,
  type PeopleNotifier,
  PeopleServiceBase,
  tokenShaped,
} from "./common.ts";
import type { InviteRow } from "./store.ts";
import { INVITE_TTL_SECONDS, type Role } from "./types.ts";

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

export interface InviteDeps extends PeopleCore {
  accounts: AccountStore;
  publicUrl: string;
  /** The live sign-up mode, read at each call (a config reload swaps it). */
  console: () => Pick<ConsoleSettings, "signup">;
  /** Mails an invite to its own email when [smtp] is set; null: nothing is mailed. */
  notify: PeopleNotifier | null;
}

/**
 * Invite links (7 days, one use): made by the CLI, the admin API, operators and account owners;
 * listed and revoked by operators; read by the invite page. Redeeming one is sign-in's
 * (`SignInService.acceptInvite`), which asks `usableInvite` here first.
 */
export class InviteService extends PeopleServiceBase {
  private readonly accounts: AccountStore;
  private readonly publicUrl: string;
  private readonly console: () => Pick<ConsoleSettings, "signup">;
  private readonly notify: PeopleNotifier | null;
  protected override readonly boundFields = ["accounts"];

  constructor(deps: InviteDeps) {
    super(deps);
    this.accounts = deps.accounts;
    this.publicUrl = deps.publicUrl;
    this.console = deps.console;
    this.notify = deps.notify;
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
    const email = input.email ? checkEmail(input.email) : null;
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

  private async liveInvite(token: string): Promise<InviteRow | null> {
    if (!tokenShaped(token)) return null;
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
  async usableInvite(token: string): Promise<InviteRow> {
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
}
