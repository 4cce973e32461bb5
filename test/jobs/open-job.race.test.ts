import { describe, expect, test } from "bun:test";
import { openJobOnce } from "../../src/jobs/open.ts";
import { onPostgres } from "../helpers/backend.ts";
import { checkInvariants } from "../ledger/ledger-helpers.ts";
import { idAnswer, openJobSetup } from "./open-job-fixture.ts";

describe("two identical opens racing each other", () => {
  test("in one group commit: one job, one hold, the other replays it", async () => {
    const s = await openJobSetup();
    const claim = { key: "race", fingerprint: "same" };
    const [a, b] = await Promise.all([
      openJobOnce(s.t.ctx, s.media(), { claim, answer: idAnswer }),
      openJobOnce(s.t.ctx, s.media(), { claim, answer: idAnswer }),
    ]);
    expect(await s.jobs()).toBe(1);
    expect(await s.holds()).toBe(1);
    const opened = [a, b].filter((o) => o.replay === null);
    const replayed = [a, b].filter((o) => o.replay !== null);
    expect(opened).toHaveLength(1);
    expect(replayed).toHaveLength(1);
    expect(JSON.parse(replayed[0]!.replay!.body)).toEqual({ request_id: opened[0]!.value!.id });
    expect(await checkInvariants(s.t.ctx.sql)).toEqual([]);
  });

  test("in separate commits: the later one replays the first", async () => {
    const s = await openJobSetup();
    const claim = { key: "race2", fingerprint: "same" };
    const first = openJobOnce(s.t.ctx, s.media(), { claim, answer: idAnswer });
    await new Promise((r) => setImmediate(r));
    const second = openJobOnce(s.t.ctx, s.media(), { claim, answer: idAnswer });
    const [a, b] = await Promise.all([first, second]);
    // SQLite (one connection, commits in order): the first opens, the later replays. PostgreSQL
    // (each open its own transaction on a pool): whichever claims the key first opens.
    const opened = onPostgres ? [a, b].find((o) => o.replay === null) : a;
    const replayed = opened === a ? b : a;
    expect(opened?.replay).toBeNull();
    expect(replayed.replay).not.toBeNull();
    expect(JSON.parse(replayed.replay!.body)).toEqual({ request_id: opened!.value!.id });
    expect(await s.jobs()).toBe(1);
  });
});
