import { consoleApp } from "../console/helpers.ts";
import { testWorkerPool } from "../helpers/context.ts";

/**
 * A console app with a funded default account and two people in it (Ann, owner; Bob, member),
 * plus Eve, the owner of another account; a worker pool runs the sandbox jobs when started.
 */
export async function studioSetup(
  balanceMicro = 10_000_000n,
  options: Parameters<typeof consoleApp>[0] = {},
) {
  const t = await consoleApp(options);
  if (balanceMicro > 0n) await t.ctx.ledger.topUp(t.account.id, balanceMicro, null);
  await t.person("ann@example.com", "owner");
  await t.person("bob@example.com", "member");
  const other = await t.ctx.accounts.createAccount("other", "USD");
  const { url } = await t.people.invites.createInvite({
    email: "eve@example.com",
    accountId: other.account.id,
    role: "owner",
  });
  await t.people.signIn.acceptInvite(url.split("/").pop()!, "correct horse battery", {
    ip: null,
    userAgent: null,
  });
  const personId = async (email: string) => (await t.people.members.findPerson(email))!.id;
  const ann = { accountId: t.account.id, personId: await personId("ann@example.com") };
  const bob = { accountId: t.account.id, personId: await personId("bob@example.com") };
  const eve = { accountId: other.account.id, personId: await personId("eve@example.com") };
  const available = async () => {
    const a = (await t.ctx.accounts.getAccount(t.account.id))!;
    return a.balance_micro - a.held_micro;
  };
  const workers = () => testWorkerPool(t.ctx);
  return { ...t, ann, bob, eve, otherAccountId: other.account.id, available, workers };
}
