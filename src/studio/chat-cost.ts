import { type RequestStores, requestDetail } from "../queue/requests.ts";

/**
 * What a studio chat reply cost, read from the ledger (the request's settled hold), never computed
 * in the browser: this reply's charge and the conversation's total (this reply and the earlier ones
 * of the same person). A reply of anyone else, or not a chat, counts 0.
 */
export type ChatCostDeps = RequestStores;

export interface ChatActor {
  accountId: string;
  personId: string;
}

/** What the ledger charged for a studio chat reply of this person (0 for anyone else's). */
export async function chargedFor(
  deps: ChatCostDeps,
  actor: ChatActor,
  id: string,
): Promise<{ micro: bigint; currency: string }> {
  const job = await deps.jobs.getOwned(id, actor.accountId);
  if (!job || job.person_id !== actor.personId || job.kind !== "text") return { micro: 0n, currency: "" };
  const p = (await requestDetail(deps, actor.accountId, id)).price;
  return { micro: p.charged_micro ?? 0n, currency: p.currency };
}

/** Reply `id`'s charge and, with the `earlier` replies' charges, the conversation's total. */
export async function conversationCost(deps: ChatCostDeps, actor: ChatActor, id: string, earlier: string[]) {
  const own = await chargedFor(deps, actor, id);
  const currency = own.currency || (await deps.accounts.getAccount(actor.accountId))!.currency;
  let total = own.micro;
  for (const e of earlier) if (e !== id) total += (await chargedFor(deps, actor, e)).micro;
  return { currency, chargedMicro: own.micro, totalMicro: total };
}
