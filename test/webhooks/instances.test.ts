import { afterEach, describe, expect, test } from "bun:test";
import { AccountStore } from "../../src/accounts/store.ts";
import { startBackground } from "../../src/app/background.ts";
import type { ConfigFile } from "../../src/config/schema.ts";
import { WebhookOutbox } from "../../src/webhooks/outbox.ts";
import { type AppInstances, openAppInstances } from "../helpers/app-instances.ts";
import { json, logLines } from "../helpers/context.ts";
import { type Instances, openInstances, until } from "../helpers/instances.ts";
import { dialects } from "../helpers/postgres.ts";
import { ok, receiver } from "./helpers.ts";

/**
 * Webhooks across instances: every instance runs a dispatcher; a delivery is claimed by one of
 * them (the claim is one conditional statement), so the receiver gets each webhook once.
 */

const rx = receiver(() => ok(200));
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  rx.hits.length = 0;
});

describe.each(dialects())("webhook outbox across instances (%s)", (dialect) => {
  test("two instances claiming at once never take the same delivery", async () => {
    const inst: Instances = await openInstances(dialect, 2);
    closers.push(() => inst.close());
    const [a, b] = inst.list as [Instances["list"][0], Instances["list"][0]];
    const { account } = await new AccountStore(a.sql).createAccount("hooks", "USD");
    const now = Date.now();
    const outA = new WebhookOutbox(a.sql, { now: () => now });
    const outB = new WebhookOutbox(b.sql, { now: () => now });
    const total = 300;
    for (let i = 0; i < total; i++) {
      await outA.enqueueAccountEvent({
        id: `msg_${i}`,
        accountId: account.id,
        url: "https://example.com/hook",
        event: "BALANCE_LOW",
        payload: "{}",
      });
    }
    // Four claimers per instance, each claiming small batches until nothing is due.
    const claimed: string[] = [];
    const claimer = async (outbox: WebhookOutbox) => {
      for (;;) {
        const batch = await outbox.claimDue(now, 3, 60_000);
        if (batch.length === 0) return;
        claimed.push(...batch.map((c) => c.id));
      }
    };
    await Promise.all([outA, outA, outA, outA, outB, outB, outB, outB].map(claimer));
    // Under the race an empty batch does not mean nothing is due (a row claimed by a commit after
    // the statement's snapshot drops out of its batch): one claimer alone drains the rest.
    await claimer(outB);
    expect(new Set(claimed).size).toBe(claimed.length);
    expect(claimed.length).toBe(total);
  });

  test("a webhook enqueued on A is delivered once, with dispatchers running on A and B", async () => {
    const config = {
      models: [],
      catalog: { sandbox: true },
      webhooks: { allow_private_cidrs: ["127.0.0.0/8"] },
    } as unknown as ConfigFile;
    const apps: AppInstances & { first: { ctx: import("../../src/server/context.ts").AppContext } } =
      await openAppInstances(dialect, config);
    closers.push(() => apps.close());
    const a = apps.first as Awaited<ReturnType<typeof apps.add>>;
    const b = await apps.add();
    await a.ctx.ledger.topUp(apps.accountId, 100_000_000n, null);
    const bgA = await startBackground(a.ctx);
    const bgB = await startBackground(b.ctx);
    closers.unshift(async () => {
      await Promise.all([bgA.stop(1000), bgB.stop(1000)]);
    });
    const n = 12;
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      // SQLite: one inserting instance (jobs.seq is counted in memory there; B delivers and runs).
      const on = dialect === "postgres" && i % 3 === 2 ? b : a;
      const res = await on.request(
        `/v1/queue/sandbox/image?webhook_url=${encodeURIComponent(rx.url("/hook"))}`,
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ prompt: `p${i}` }),
        },
      );
      if (res.status !== 202) console.log(await res.text(), logLines.slice(-5).join("\n"));
      expect(res.status).toBe(202);
      ids.push((await json<{ request_id: string }>(res)).request_id);
    }
    const delivered = () => new Set(rx.hits.map((h) => h.headers.get("webhook-id")));
    await until(() => delivered().size === n, 30_000, `${n} webhooks delivered`);
    // Whatever a second dispatcher could still send would come now.
    await Bun.sleep(1500);
    const perId = new Map<string, number>();
    for (const h of rx.hits)
      perId.set(h.headers.get("webhook-id")!, (perId.get(h.headers.get("webhook-id")!) ?? 0) + 1);
    expect([...perId.values()].every((c) => c === 1)).toBe(true);
    expect(perId.size).toBe(n);
    for (const id of ids) {
      expect((await a.ctx.outbox.deliveryFor(id))?.status).toBe("delivered");
    }
  });
});
