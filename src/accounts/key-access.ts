import { DomainError } from "../lib/errors.ts";
import type { Role } from "../people/types.ts";
import type { AccountStore, ApiKeyRow } from "./store.ts";

/**
 * Which API keys a console person may change: owners every key of their account, members the keys
 * they created (`created_by`). Used by the console's keys pages for both the buttons shown and the
 * changes allowed.
 */
export interface KeyAccessDeps {
  accounts: Pick<AccountStore, "getKey">;
}

/** The signed-in person as the rule sees them: their account, role and person id. */
export interface KeyActor {
  accountId: string;
  personId: string;
  role: Role;
}

const KEY_ID = /^key_[0-9A-Za-z]{8,64}$/;

export function mayManageKey(actor: KeyActor, key: ApiKeyRow): boolean {
  return actor.role === "owner" || key.created_by === actor.personId;
}

/** The key `id` of the actor's account (404 otherwise, also for a malformed id), that they may manage (403). */
export async function manageableKey(
  deps: KeyAccessDeps,
  actor: KeyActor,
  id: string | undefined,
): Promise<ApiKeyRow> {
  if (!id || !KEY_ID.test(id)) throw new DomainError("not_found", "There is no such key in this account.");
  const key = await deps.accounts.getKey(actor.accountId, id);
  if (!mayManageKey(actor, key)) {
    throw new DomainError("forbidden", "Members can change only the keys they created; ask an owner.");
  }
  return key;
}
