import type { AccountStore } from "../accounts/store.ts";
import type { Wallet } from "../ledger/wallet.ts";
import { keysetPage } from "../lib/keyset-page.ts";
import type { InviteService } from "../people/invites.ts";
import type { MemberService } from "../people/members.ts";
import { requireAccount } from "./operations.ts";

/**
 * What the console's operator pages read (/console/admin/accounts/:id, /console/admin/people): one
 * account with its keys, members and latest wallet entries; a page of people with the invites and the
 * names of the accounts both point at. Reads only; the changes go through operations.ts and the
 * people services.
 */
export interface AdminDirectoryDeps {
  accounts: Pick<AccountStore, "getAccount" | "listKeys">;
  wallet: Pick<Wallet, "entries">;
  people: {
    members: Pick<MemberService, "listMembers" | "listPeople">;
    invites: Pick<InviteService, "listInvites">;
  };
}

/** The account page shows the 10 latest wallet entries (the wallet page has them all). */
const LATEST_ENTRIES = 10;
const PERSON_ID = /^person_[0-9A-Za-z]{8,64}$/;

export async function accountOverview(s: AdminDirectoryDeps, accountId: string) {
  const account = await requireAccount(s, accountId);
  const keys = await s.accounts.listKeys(account.id);
  const members = await s.people.members.listMembers(account.id);
  const entries = (await s.wallet.entries(account.id, LATEST_ENTRIES, null)).data;
  return { account, keys, members, entries };
}

/**
 * A page of people (`limit`, after the person id `after`; a malformed cursor is the first page), the
 * latest `limit` invites, and the name of each account they name (its id when the account is gone).
 */
export async function peopleDirectory(s: AdminDirectoryDeps, limit: number, after: string) {
  const got = await s.people.members.listPeople({
    limit: limit + 1,
    after: PERSON_ID.test(after) ? after : null,
  });
  const { page: people, next_cursor: next } = keysetPage(got, limit);
  const invites = await s.people.invites.listInvites({ limit });
  const names = new Map<string, string>();
  const ids = [
    ...people.flatMap((p) => p.memberships.map((m) => m.accountId)),
    ...invites.map((i) => i.accountId),
  ];
  for (const id of ids)
    if (id !== null && !names.has(id)) names.set(id, (await s.accounts.getAccount(id))?.name ?? id);
  return { people, next, invites, names };
}
