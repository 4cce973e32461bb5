import { JobOutputStore } from "../../src/files/job-output-store.ts";
import { JobEvents } from "../../src/queue/events.ts";
import { JobLogStore } from "../../src/queue/job-log-store.ts";
import { type FinalStateHook, JobStore } from "../../src/queue/job-store.ts";
import { sqlOf } from "../helpers/sql.ts";
import { makeLedger, newAccount } from "../ledger/ledger-helpers.ts";

/**
 * A JobStore (and its job logs) over a funded in-memory ledger, and `submit`, which reserves and inserts a queued
 * job in one transaction as the submit path does. `finals` records each final-state hook call;
 * `finalHooks` run after that record, in the same transaction.
 */
export async function jobFixture(o: { finalHooks?: FinalStateHook[] } = {}) {
  const { db, accounts, ledger } = makeLedger();
  const { account, keyId } = await newAccount(accounts);
  await ledger.topUp(account.id, 1_000_000n, null);
  const finals: string[] = [];
  const jobs = new JobStore(sqlOf(db), {
    ledger,
    outputs: new JobOutputStore(sqlOf(db)),
    events: new JobEvents(),
    finalHooks: [(_tx, j) => void finals.push(`${j.id}:${j.status}`), ...(o.finalHooks ?? [])],
  });
  const jobLogs = new JobLogStore(sqlOf(db));
  let n = 0;
  const submit = async (o: { amount?: bigint; deadlineAt?: number; kind?: string } = {}) => {
    const id = `00000000-0000-7000-8000-${String(++n).padStart(12, "0")}`;
    await sqlOf(db).tx(async (tx) => {
      const hold = await ledger.in(tx).reserve({
        accountId: account.id,
        keyId,
        modelId: "m",
        requestId: id,
        source: "API",
        quotedUsdMicro: o.amount ?? 1000n,
      });
      await jobs.in(tx).insert({
        id,
        accountId: account.id,
        keyId,
        modelId: "m",
        kind: o.kind ?? "image",
        source: "API",
        provider: "sandbox",
        input: "{}",
        quote: "{}",
        holdId: hold.id,
        webhookUrl: null,
        deadlineAt: o.deadlineAt ?? Date.now() + 60_000,
        createdAt: Date.now(),
      });
    });
    return id;
  };
  return { db, ledger, jobs, jobLogs, submit, finals, accountId: account.id };
}
