import { afterEach, describe, expect, test } from "bun:test";
import { MailOutbox } from "../../src/mail/outbox.ts";
import { WebhookOutbox } from "../../src/webhooks/outbox.ts";
import { type Instances, openInstances } from "../helpers/instances.ts";
import { dialects } from "../helpers/postgres.ts";

// Several instances claiming due rows of one outbox at once: each row is claimed by exactly one of
// them. On PostgreSQL (READ COMMITTED) the claim's subquery is not re-run after a lock wait, so
// without the due condition repeated outside it (and SKIP LOCKED inside) two instances claimed the
// same row and sent the same webhook twice (found by test/scale/multi-instance.blackbox.test.ts).

const ROWS = 150;
const INSTANCES = 3;
let open: Instances | null = null;
afterEach(async () => {
  await open?.close();
  open = null;
});

/**
 * Every instance claims in small batches, all at once, until it gets an empty batch; then one
 * claimer alone drains the rest. Returns the ids claimed. (Under a race an empty batch does not
 * mean nothing is due: rows another claim holds are skipped, and a row whose claim committed after
 * this statement's snapshot drops out of its batch. The dispatcher's timer is the drain there.)
 */
async function race(claim: (i: number) => Promise<string[]>): Promise<string[]> {
  const claimed: string[] = [];
  const drain = async (i: number) => {
    for (;;) {
      const ids = await claim(i);
      if (ids.length === 0) return;
      claimed.push(...ids);
    }
  };
  await Promise.all(Array.from({ length: INSTANCES * 4 }, async (_, loop) => await drain(loop % INSTANCES)));
  await drain(0);
  return claimed;
}

describe.each(dialects())("outbox claims racing across instances (%s)", (dialect) => {
  test("every due webhook delivery is claimed by exactly one instance", async () => {
    open = await openInstances(dialect, INSTANCES);
    const now = Date.now();
    const outboxes = open.list.map((i) => new WebhookOutbox(i.sql, { now: () => now - 1000 }));
    for (let n = 0; n < ROWS; n++) {
      await outboxes[0]!.enqueue({
        requestId: `req-${n}`,
        accountId: "acct",
        url: "https://hooks.example.com/x",
        event: "COMPLETED",
      });
    }
    const claimed = await race(async (i) => (await outboxes[i]!.claimDue(now, 3, 60_000)).map((c) => c.id));
    expect(claimed.length).toBe(ROWS);
    expect(new Set(claimed).size).toBe(ROWS);
  }, 60_000);

  test("every due mail is claimed by exactly one instance", async () => {
    open = await openInstances(dialect, INSTANCES);
    const now = Date.now();
    const outboxes = open.list.map((i) => new MailOutbox(i.sql, { now: () => now - 1000 }));
    for (let n = 0; n < ROWS; n++) {
      await outboxes[0]!.enqueue("invite", [`p${n}@example.com`], {
        subject: "s",
        text: "t",
        html: "<p>t</p>",
      });
    }
    const claimed = await race(async (i) => (await outboxes[i]!.claimDue(now, 3, 60_000)).map((c) => c.id));
    expect(claimed.length).toBe(ROWS);
    expect(new Set(claimed).size).toBe(ROWS);
  }, 60_000);
});
