import type { Database } from "bun:sqlite";
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { migrate, openDatabase } from "../../src/db/database.ts";
import { setLogSink } from "../../src/lib/log.ts";
import type { postPinned } from "../../src/webhooks/deliver.ts";
import {
  DEFAULT_RETRY_SCHEDULE_MS,
  type DispatcherDeps,
  WebhookDispatcher,
} from "../../src/webhooks/dispatcher.ts";
import { type WebhookEvent, WebhookOutbox } from "../../src/webhooks/outbox.ts";
import { WebhookSecretStore } from "../../src/webhooks/secret-store.ts";
import { verifyWebhook } from "../../src/webhooks/signing.ts";
import type { WebhookPolicy } from "../../src/webhooks/url-policy.ts";
import { sqlOf } from "../helpers/sql.ts";
import {
  deferred,
  fakeResolver,
  LOOPBACK_ALLOWED,
  NOTHING_ALLOWED,
  never,
  ok,
  receiver,
  tempFile,
  waitFor,
  webhookDb,
} from "./helpers.ts";

// Per path: what the receiver answers to its n-th hit.
const answers: Record<string, (n: number) => Response | Promise<Response>> = {
  "/ok": () => ok(200),
  "/flaky": (n) => ok(n === 1 ? 500 : 200),
  "/error": () => ok(500),
  "/gone": () => ok(410),
  "/redirect": () => new Response(null, { status: 302, headers: { location: "/target" } }),
  "/hang": () => never(),
};
const rx = receiver((path, n) => (answers[path] ?? (() => ok(404)))(n));
afterAll(() => rx.stop());

let logs: Record<string, unknown>[] = [];
beforeEach(() => {
  logs = [];
  setLogSink((line) => logs.push(JSON.parse(line)));
});

const running: WebhookDispatcher[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((d) => d.stop()));
});

let seq = 0;
function nextRequestId(): string {
  seq += 1;
  return `0193a1b2-c3d4-7e5f-8a9b-${String(seq).padStart(12, "0")}`;
}

interface Setup {
  db?: Database;
  accountId?: string;
  now?: () => number;
  policy?: WebhookPolicy;
  deps?: Partial<DispatcherDeps>;
}

async function setup(o: Setup = {}) {
  const base = o.db && o.accountId ? { db: o.db, accountId: o.accountId } : await webhookDb();
  const { db, accountId } = base;
  const outbox = new WebhookOutbox(sqlOf(db), { now: o.now });
  const secrets = new WebhookSecretStore(sqlOf(db));
  const records = new Map<string, unknown>();
  const dispatcher = new WebhookDispatcher({
    outbox,
    secrets,
    renderRecord: async (id) => records.get(id) ?? null,
    policy: () => o.policy ?? LOOPBACK_ALLOWED,
    now: o.now,
    schedule: [20, 20, 20],
    ...o.deps,
  });
  running.push(dispatcher);
  /** A finished request with a webhook: its record and its outbox row. */
  const finish = async (path: string, event: WebhookEvent = "COMPLETED", url = rx.url(path)) => {
    const requestId = nextRequestId();
    records.set(requestId, { request_id: requestId, status: event, price: { charged_micro: 10n } });
    await outbox.enqueue({ requestId, accountId, url, event });
    return requestId;
  };
  const row = (requestId: string) =>
    db
      .query<{ next_attempt_at: bigint; attempts: bigint; status: string }, [string]>(
        "SELECT next_attempt_at, attempts, status FROM webhook_deliveries WHERE request_id = ?",
      )
      .get(requestId)!;
  return { db, accountId, outbox, secrets, records, dispatcher, finish, row };
}

describe("dispatcher (happy)", () => {
  test("delivers a signed POST of the full record, rendered at send time, and records it", async () => {
    const dns = fakeResolver({ "hooks.test": ["127.0.0.1"] });
    const s = await setup({ deps: { resolve: dns } });
    const id = await s.finish("/ok", "COMPLETED", `http://hooks.test:${rx.port}/ok?token=s3cret`);
    // The body is rendered when sent, not when enqueued.
    s.records.set(id, { request_id: id, status: "COMPLETED", note: "rendered later" });
    const before = rx.count("/ok");
    await s.dispatcher.start();
    s.dispatcher.wake();
    await waitFor("delivered", async () => (await s.outbox.deliveryFor(id))?.status === "delivered");

    expect(rx.count("/ok")).toBe(before + 1);
    const hit = rx.hits.at(-1)!;
    expect(hit.body).toBe(JSON.stringify({ request_id: id, status: "COMPLETED", note: "rendered later" }));
    expect(hit.headers.get("webhook-id")).toBe(`msg_${id}_completed`);
    expect(Number(hit.headers.get("webhook-timestamp"))).toBeCloseTo(Date.now() / 1000, -1);
    expect(hit.headers.get("webhook-signature")).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    // Pinned to the checked address: the Host is the URL's, the name exists in no real DNS.
    expect(hit.headers.get("host")).toBe(`hooks.test:${rx.port}`);
    verifyWebhook(await s.secrets.get(s.accountId), hit.headers, hit.body);

    expect(await s.outbox.deliveryFor(id)).toEqual({
      url: `http://hooks.test:${rx.port}/ok?token=s3cret`,
      status: "delivered",
      attempts: 1,
      last_status: 200,
      last_error: null,
    });
    const line = logs.find((l) => l.msg === "webhook attempt" && l.request_id === id)!;
    expect(line).toMatchObject({
      host: `hooks.test:${rx.port}`,
      status: 200,
      attempt: 1,
      outcome: "delivered",
    });
    expect(JSON.stringify(logs)).not.toContain("s3cret");
  });

  test("500 then 200: retried after the schedule's delay, then delivered; same webhook-id", async () => {
    const s = await setup();
    const id = await s.finish("/flaky", "FAILED");
    await s.dispatcher.start();
    await waitFor("delivered", async () => (await s.outbox.deliveryFor(id))?.status === "delivered");
    const hits = rx.hits.filter((h) => h.path === "/flaky").slice(-2);
    expect(hits.length).toBe(2);
    expect(hits.map((h) => h.headers.get("webhook-id"))).toEqual([`msg_${id}_failed`, `msg_${id}_failed`]);
    for (const h of hits) verifyWebhook(await s.secrets.get(s.accountId), h.headers, h.body);
    expect(await s.outbox.deliveryFor(id)).toMatchObject({
      status: "delivered",
      attempts: 2,
      last_status: 200,
    });
    const outcomes = logs.filter((l) => l.request_id === id).map((l) => [l.attempt, l.status, l.outcome]);
    expect(outcomes).toEqual([
      [1, 500, "retry"],
      [2, 200, "delivered"],
    ]);
  });

  test("during a rotation overlap the webhook carries both signatures", async () => {
    const s = await setup();
    const old = await s.secrets.get(s.accountId);
    const fresh = await s.secrets.rotate(s.accountId);
    const id = await s.finish("/ok");
    expect(await s.dispatcher.runDue()).toBe(1);
    const hit = rx.hits.at(-1)!;
    expect(hit.headers.get("webhook-signature")!.split(" ").length).toBe(2);
    verifyWebhook(fresh, hit.headers, hit.body);
    verifyWebhook(old, hit.headers, hit.body);
    expect((await s.outbox.deliveryFor(id))?.status).toBe("delivered");
  });

  test("the default schedule is the contract's: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h", () => {
    const s = 1000;
    expect([...DEFAULT_RETRY_SCHEDULE_MS]).toEqual([
      5 * s,
      300 * s,
      1800 * s,
      7200 * s,
      18000 * s,
      36000 * s,
      36000 * s,
    ]);
  });

  test("wake() starts delivery at once instead of waiting for the next scan", async () => {
    const s = await setup({ deps: { maxSleepMs: 60_000 } });
    await s.dispatcher.start(); // nothing due: sleeps up to 60 s
    const id = await s.finish("/ok");
    await Bun.sleep(50);
    expect((await s.outbox.deliveryFor(id))?.status).toBe("pending");
    s.dispatcher.wake();
    await waitFor(
      "delivered after wake",
      async () => (await s.outbox.deliveryFor(id))?.status === "delivered",
    );
  });

  test("at most `concurrency` attempts are in flight; all are delivered", async () => {
    const gates: ReturnType<typeof deferred<{ status: number; address: string }>>[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const post: typeof postPinned = async () => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const gate = deferred<{ status: number; address: string }>();
      gates.push(gate);
      try {
        return await gate.promise;
      } finally {
        inFlight -= 1;
      }
    };
    const s = await setup({ deps: { post, concurrency: 2 } });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await s.finish("/ok"));
    await s.dispatcher.start();
    await waitFor("two attempts started", () => gates.length === 2);
    await Bun.sleep(30);
    expect(gates.length).toBe(2);
    for (let i = 0; i < 6; i++) {
      await waitFor(`attempt ${i + 1} started`, () => gates.length > i);
      gates[i]!.resolve({ status: 204, address: "127.0.0.1" });
    }
    await waitFor("all delivered", async () =>
      (await Promise.all(ids.map(async (id) => await s.outbox.deliveryFor(id)))).every(
        (d) => d?.status === "delivered",
      ),
    );
    expect(maxInFlight).toBe(2);
  });
});

describe("dispatcher (errors)", () => {
  test("410 stops at once: failed after one attempt, never retried", async () => {
    const s = await setup();
    const id = await s.finish("/gone", "CANCELLED");
    const before = rx.count("/gone");
    await s.dispatcher.start();
    await waitFor("failed", async () => (await s.outbox.deliveryFor(id))?.status === "failed");
    await Bun.sleep(80); // several schedule delays (20 ms) later
    expect(rx.count("/gone")).toBe(before + 1);
    expect(await s.outbox.deliveryFor(id)).toMatchObject({ status: "failed", attempts: 1, last_status: 410 });
    expect((await s.outbox.deliveryFor(id))?.last_error).toMatch(/410/);
  });

  test("a 302 is not followed and is recorded as a non-2xx answer", async () => {
    const s = await setup({ deps: { schedule: [60_000] } });
    const id = await s.finish("/redirect");
    expect(await s.dispatcher.runDue()).toBe(1);
    expect(rx.count("/target")).toBe(0);
    expect(await s.outbox.deliveryFor(id)).toEqual({
      url: rx.url("/redirect"),
      status: "pending",
      attempts: 1,
      last_status: 302,
      last_error: "HTTP 302",
    });
  });

  test("each retry waits schedule[attempts-1]; the delivery fails when the schedule is exhausted", async () => {
    let now = 1_700_000_000_000;
    const s = await setup({ now: () => now, deps: { schedule: [1000, 5000] } });
    const id = await s.finish("/error");
    const before = rx.count("/error");

    expect(await s.dispatcher.runDue()).toBe(1);
    expect(s.row(id)).toEqual({ next_attempt_at: BigInt(now + 1000), attempts: 1n, status: "pending" });
    // Signed at send time, with the dispatcher's clock.
    const first = rx.hits.at(-1)!;
    expect(first.headers.get("webhook-timestamp")).toBe(String(Math.floor(now / 1000)));
    verifyWebhook(await s.secrets.get(s.accountId), first.headers, first.body, 0, Math.floor(now / 1000));
    now += 999;
    expect(await s.dispatcher.runDue()).toBe(0);
    now += 1;
    expect(await s.dispatcher.runDue()).toBe(1);
    expect(s.row(id)).toEqual({ next_attempt_at: BigInt(now + 5000), attempts: 2n, status: "pending" });
    now += 5000;
    expect(await s.dispatcher.runDue()).toBe(1);
    expect(await s.outbox.deliveryFor(id)).toMatchObject({ status: "failed", attempts: 3, last_status: 500 });
    expect((await s.outbox.deliveryFor(id))?.last_error).toMatch(/gave up after 3 attempts/);
    now += 100 * 3_600_000;
    expect(await s.dispatcher.runDue()).toBe(0);
    expect(rx.count("/error")).toBe(before + 3);
  });

  test("a timeout is retried", async () => {
    const s = await setup({ deps: { timeoutMs: 100, schedule: [20, 20] } });
    const id = await s.finish("/hang");
    await s.dispatcher.start();
    await waitFor(
      "retried after a timeout",
      async () => ((await s.outbox.deliveryFor(id))?.attempts ?? 0) >= 2,
    );
    const d = (await s.outbox.deliveryFor(id))!;
    expect(d.last_status).toBeNull();
    expect(d.last_error).toMatch(/timeout/);
    await waitFor(
      "failed after the schedule",
      async () => (await s.outbox.deliveryFor(id))?.status === "failed",
    );
    expect(await s.outbox.deliveryFor(id)).toMatchObject({ attempts: 3, last_status: null });
  });

  test("a request whose record is gone fails without a POST", async () => {
    const calls: string[] = [];
    const s = await setup({
      deps: {
        post: async (url) => {
          calls.push(url.href);
          return { status: 200, address: "127.0.0.1" };
        },
      },
    });
    const id = await s.finish("/ok");
    s.records.delete(id);
    await s.dispatcher.runDue();
    expect(calls).toEqual([]);
    expect(await s.outbox.deliveryFor(id)).toMatchObject({ status: "failed", attempts: 1 });
  });

  test("no delivery is owed for a request without one", async () => {
    expect(await (await setup()).outbox.deliveryFor("0193a1b2-0000-7000-8000-000000000000")).toBeNull();
  });
});

describe("dispatcher (security)", () => {
  test("without the allow-list, 127.0.0.1 is refused at delivery: recorded, no connection made", async () => {
    const s = await setup({ policy: NOTHING_ALLOWED, deps: { schedule: [60_000] } });
    const id = await s.finish("/ok");
    const before = rx.hits.length;
    expect(await s.dispatcher.runDue()).toBe(1);
    expect(rx.hits.length).toBe(before);
    const d = (await s.outbox.deliveryFor(id))!;
    expect(d).toMatchObject({ status: "pending", attempts: 1, last_status: null });
    expect(d.last_error).toMatch(/refused/);
  });

  test("the policy is read at every attempt: removing the allow-list stops a pending retry", async () => {
    let policy: WebhookPolicy = LOOPBACK_ALLOWED;
    let now = 1_700_000_000_000;
    const s = await setup({ now: () => now, deps: { policy: () => policy, schedule: [1000] } });
    const id = await s.finish("/error");
    const before = rx.count("/error");
    await s.dispatcher.runDue();
    expect(rx.count("/error")).toBe(before + 1);
    policy = NOTHING_ALLOWED;
    now += 1000;
    await s.dispatcher.runDue();
    expect(rx.count("/error")).toBe(before + 1);
    expect((await s.outbox.deliveryFor(id))?.last_error).toMatch(/refused/);
  });
});

describe("outbox durability", () => {
  test("enqueue belongs to the caller's transaction: rolled back, nothing is owed", async () => {
    const s = await setup();
    const requestId = nextRequestId();
    await expect(
      sqlOf(s.db).tx(async (tx) => {
        await s.outbox
          .in(tx)
          .enqueue({ requestId, accountId: s.accountId, url: rx.url("/ok"), event: "COMPLETED" });
        throw new Error("the final-state write failed");
      }),
    ).rejects.toThrow(/final-state/);
    expect(await s.outbox.deliveryFor(requestId)).toBeNull();
    await sqlOf(s.db).tx(async (tx) => {
      await s.outbox
        .in(tx)
        .enqueue({ requestId, accountId: s.accountId, url: rx.url("/ok"), event: "COMPLETED" });
    });
    expect((await s.outbox.deliveryFor(requestId))?.status).toBe("pending");
  });

  test("enqueueing the same request and event again owes nothing more, even after delivery", async () => {
    const s = await setup();
    const id = await s.finish("/ok");
    const again = async () =>
      await s.outbox.enqueue({
        requestId: id,
        accountId: s.accountId,
        url: rx.url("/ok"),
        event: "COMPLETED",
      });
    await again();
    expect(s.db.query("SELECT count(*) AS n FROM webhook_deliveries").get()).toEqual({ n: 1n });
    const before = rx.count("/ok");
    await s.dispatcher.runDue();
    await again();
    expect(await s.dispatcher.runDue()).toBe(0);
    expect(rx.count("/ok")).toBe(before + 1);
    expect(await s.outbox.deliveryFor(id)).toMatchObject({ status: "delivered", attempts: 1 });
  });

  test("crash before delivery: a new process on the same file delivers it, exactly once", async () => {
    const file = tempFile("crash.db");
    const first = await webhookDb(file);
    const a = await setup({ db: first.db, accountId: first.accountId });
    const id = await a.finish("/ok");
    // The process dies here: the dispatcher never ran, the database is closed.
    await a.dispatcher.stop();
    first.db.close();

    const db = openDatabase(file);
    migrate(db);
    const b = await setup({ db, accountId: first.accountId });
    b.records.set(id, { request_id: id, status: "COMPLETED" });
    expect((await b.outbox.deliveryFor(id))?.status).toBe("pending");
    const before = rx.count("/ok");
    await b.dispatcher.start();
    await waitFor(
      "delivered after restart",
      async () => (await b.outbox.deliveryFor(id))?.status === "delivered",
    );
    await Bun.sleep(60);
    expect(await b.dispatcher.runDue()).toBe(0);
    expect(rx.count("/ok")).toBe(before + 1);
    expect(await b.outbox.deliveryFor(id)).toMatchObject({ status: "delivered", attempts: 1 });
  });

  test("an attempt claimed but never finished is retried after its lease, and its late result is ignored", async () => {
    const file = tempFile("lease.db");
    const { db, accountId } = await webhookDb(file);
    let now = 1_700_000_000_000;
    const clock = () => now;
    const stuck = deferred<{ status: number; address: string }>();
    let stuckCalls = 0;
    // Process A claims the delivery and hangs inside the POST (then "dies").
    const a = await setup({
      db,
      accountId,
      now: clock,
      deps: {
        leaseMs: 60_000,
        post: () => {
          stuckCalls += 1;
          return stuck.promise;
        },
      },
    });
    const id = await a.finish("/ok");
    const aAttempt = a.dispatcher.runDue();
    await waitFor("A's attempt started", () => stuckCalls === 1);
    expect(a.row(id)).toMatchObject({
      next_attempt_at: BigInt(now + 60_000),
      attempts: 0n,
      status: "pending",
    });

    // Process B (its own connection to the same file) must leave it alone until the lease ends.
    const dbB = openDatabase(file);
    const b = await setup({ db: dbB, accountId, now: clock });
    b.records.set(id, { request_id: id, status: "COMPLETED" });
    const before = rx.count("/ok");
    now += 59_999;
    expect(await b.dispatcher.runDue()).toBe(0);
    now += 1;
    expect(await b.dispatcher.runDue()).toBe(1);
    expect(rx.count("/ok")).toBe(before + 1);
    expect(await b.outbox.deliveryFor(id)).toMatchObject({
      status: "delivered",
      attempts: 1,
      last_status: 200,
    });

    // A's attempt finally returns (say 500): its lease is gone, so it changes nothing.
    stuck.resolve({ status: 500, address: "127.0.0.1" });
    await aAttempt;
    expect(await b.outbox.deliveryFor(id)).toMatchObject({
      status: "delivered",
      attempts: 1,
      last_status: 200,
    });
    expect(logs.some((l) => l.request_id === id && l.outcome === "lost_lease")).toBe(true);
  });

  test.each([
    [410, "a final failure"],
    [500, "a retry"],
  ])(
    "a stale attempt's late %p (%s) cannot overwrite the state written by the attempt that re-claimed it",
    async (late) => {
      let now = 1_700_000_000_000;
      const stuck = deferred<{ status: number; address: string }>();
      let started = false;
      const post = () => {
        started = true;
        return stuck.promise;
      };
      const a = await setup({ now: () => now, deps: { leaseMs: 1000, post } });
      const id = await a.finish("/ok");
      const aAttempt = a.dispatcher.runDue();
      await waitFor("A's attempt started", () => started);
      now += 1000;
      // Another dispatcher re-claims after the lease and gets a 503: retry scheduled.
      const b = await setup({
        db: a.db,
        accountId: a.accountId,
        now: () => now,
        deps: { schedule: [5000], post: async () => ({ status: 503, address: "127.0.0.1" }) },
      });
      b.records.set(id, { request_id: id });
      expect(await b.dispatcher.runDue()).toBe(1);
      const after = a.row(id);
      expect(after).toEqual({ next_attempt_at: BigInt(now + 5000), attempts: 1n, status: "pending" });
      stuck.resolve({ status: late, address: "127.0.0.1" });
      await aAttempt;
      expect(a.row(id)).toEqual(after);
      expect((await a.outbox.deliveryFor(id))?.last_status).toBe(503);
    },
  );

  test("stop() waits for the attempt in flight to be recorded", async () => {
    const gate = deferred<{ status: number; address: string }>();
    let started = false;
    const s = await setup({
      deps: {
        post: () => {
          started = true;
          return gate.promise;
        },
      },
    });
    const id = await s.finish("/ok");
    await s.dispatcher.start();
    await waitFor("attempt started", () => started);
    const stopped = s.dispatcher.stop();
    setTimeout(() => gate.resolve({ status: 200, address: "127.0.0.1" }), 20);
    await stopped;
    expect((await s.outbox.deliveryFor(id))?.status).toBe("delivered");
  });
});
