import { describe, expect, test } from "bun:test";
import { countStatements, type StatementCount } from "../../src/db/sql.ts";
import { onPostgres } from "../helpers/backend.ts";
import { json, makeTestApp } from "../helpers/context.ts";

/**
 * How many statements the money path sends (src/db/sql.ts countStatements), pinned so they cannot
 * silently grow again: on PostgreSQL each is a network round trip (docs/performance.md "Issue 36:
 * PostgreSQL round trips" has the before and after). A count, never a timing. The in-process app
 * runs no workers, so only the operation's own statements are counted.
 */
async function funded() {
  const t = await makeTestApp();
  await t.ctx.ledger.topUp(t.account.id, 100_000_000n, null);
  const submit = (path: string) =>
    t.request(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: "a fox" }),
    });
  // Warm: the key's principal and the model's settings are cached after the first request.
  expect((await submit("/v1/queue/sandbox/image")).status).toBe(202);
  return { t, submit };
}

/** Round trips on PostgreSQL: every statement and transaction control, less what was pipelined. */
const roundTrips = (c: StatementCount) => c.statements - c.pipelined + c.control;

/**
 * The counts pinned, per dialect (the statements are the same; SQLite's group commit adds its
 * savepoints, and SQLite has no round trips). PostgreSQL before issue 36: submit 14 round trips,
 * settlement 15, chat 26; after its first pass 6, 7 and 12; now 3, 5 and 7.
 */
function expectCount(
  c: StatementCount,
  want: { sqlite: [number, number]; postgres: [number, number, number] },
) {
  const got = { statements: c.statements, control: c.control, roundTrips: roundTrips(c) };
  const [statements, control, trips] = onPostgres ? want.postgres : [...want.sqlite, got.roundTrips];
  expect(got, c.sent.join("\n")).toEqual({ statements, control, roundTrips: trips });
}

describe("statements per operation on the money path", () => {
  test("POST /v1/queue: the cap, the reservation, the job", async () => {
    const { submit } = await funded();
    const { value: res, count } = await countStatements(() => submit("/v1/queue/sandbox/image"));
    expect(res.status).toBe(202);
    // The write-rate window; [BEGIN, the account]; [the hold, the job, the key's in-flight count,
    // the key's held money, the account's, the ledger row, COMMIT]. The rows every submit of the
    // key waits for are taken in the round trip that commits: held for no round trip.
    expectCount(count, { sqlite: [8, 4], postgres: [8, 2, 3] });
    if (onPostgres) expect(count.sent.at(-1), count.sent.join("\n")).toBe("+ COMMIT");
  });

  test("a settlement: the final state, the charge, the webhook outbox", async () => {
    const { t, submit } = await funded();
    const res = await submit(
      `/v1/queue/sandbox/image?webhook_url=${encodeURIComponent("https://93.184.216.34/x")}`,
    );
    expect(res.status, await res.clone().text()).toBe(202);
    const id = (await json(res)).request_id as string;
    // The warm-up job first, then this one (claimed in order).
    await t.ctx.jobs.claimNext("sandbox", [], "w", 60_000, Date.now());
    const claimed = (await t.ctx.jobs.claimNext("sandbox", [], "w", 60_000, Date.now()))!;
    expect(claimed.id).toBe(id);
    const { value, count } = await countStatements(() =>
      t.ctx.jobs.fenced("w", claimed.attempt).complete(id, {}, [], 1n, "1", 60_000, Date.now(), 1n),
    );
    expect(value).toBe(true);
    // [BEGIN, the final state]; the webhook's delivery; the hold (with its account's alert
    // threshold); the hold resolved; [the key's open jobs, the requests rollup, the key's held
    // money, the account (charge and release in one UPDATE), the key's month, the account's day
    // (usage_daily), the charge and release rows, COMMIT]: the key's row is held for no round trip.
    expectCount(count, { sqlite: [12, 2], postgres: [12, 2, 5] });
    if (onPostgres) expect(count.sent.at(-1), count.sent.join("\n")).toBe("+ COMMIT");
  });

  test("a chat call: opened, answered, settled", async () => {
    const { t } = await funded();
    const { value: res, count } = await countStatements(() =>
      t.request("/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "sandbox/chat",
          messages: [{ role: "user", content: "hi" }],
          max_tokens: 4,
        }),
      }),
    );
    expect(res.status).toBe(200);
    await res.text();
    // The submit's, then the settlement's without a release row nor a webhook.
    expectCount(count, { sqlite: [18, 10], postgres: [18, 4, 7] });
  });
});
