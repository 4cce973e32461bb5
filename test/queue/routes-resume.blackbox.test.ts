import { afterAll, describe, expect, test } from "bun:test";
import { pollUntil } from "../helpers/api.ts";
import type { TestServer } from "../helpers/server.ts";
import {
  accountMoney,
  boxModel,
  finalRecord,
  restartableGateway,
  submitBox,
} from "../providers/cog/restartable.ts";
import { startStandInCog } from "../providers/cog/stand-in-cog.ts";

/**
 * kill -9 of gengate between an upstream's acceptance of a job and its answer, for a model on two
 * routes (two stand-ins of cog's HTTP API, test/providers/cog/stand-in-cog.ts): the restarted gateway
 * resumes the job where it was accepted; the second route never receives a prediction.
 */
const first = startStandInCog({ backoffMs: 100 });
const second = startStandInCog({ backoffMs: 100 });
const servers: TestServer[] = [];
afterAll(() => {
  for (const s of servers) s.cleanup();
  first.stop();
  second.stop();
});

async function gateway() {
  const g = await restartableGateway(
    `[providers.boxone]\ntype = "cog"\nbase_url = "${first.url}"\nconcurrency = 1\n` +
      `[providers.boxtwo]\ntype = "cog"\nbase_url = "${second.url}"\nconcurrency = 1\n` +
      boxModel(
        'routes = [{ provider = "boxone", cost_usd_micro = 400 }, { provider = "boxtwo", cost_usd_micro = 500 }]',
      ),
    servers,
  );
  return { s: g.first, start: g.start, key: g.key };
}

describe("routes: kill -9 between the upstream's acceptance and its answer", () => {
  test("resumed on the route that accepted it, completed and charged once; the second route gets nothing", async () => {
    const g = await gateway();
    first.hold();
    const id = await submitBox(g.s);
    await pollUntil(
      async () => first.started(),
      (ids) => ids.includes(id),
    );
    await Bun.sleep(300); // the upstream id is recorded right after cog's 202
    g.s.proc.kill("SIGKILL");
    await g.s.proc.exited;

    const again = await g.start();
    first.release();
    const rec = await finalRecord(again, id, g.key);
    expect(rec.status).toBe("COMPLETED");
    expect(first.started().filter((p) => p === id)).toEqual([id]);
    expect(second.started()).toEqual([]);
    expect(second.creates()).toBe(0);
    expect(await accountMoney(again, g.key)).toMatchObject({ balance_micro: "999000", held_micro: "0" });
    // The client's record names no route.
    expect(JSON.stringify(rec)).not.toMatch(/boxone|boxtwo/);
  });

  test("a cog box answering BUSY to its health check received nothing: the job runs on the second route", async () => {
    const g = await gateway();
    first.health = "BUSY";
    try {
      const creates = first.creates();
      const id = await submitBox(g.s);
      const rec = await finalRecord(g.s, id, g.key);
      expect(rec.status).toBe("COMPLETED");
      expect(first.creates()).toBe(creates); // never PUT to the busy box
      expect(second.started()).toContain(id);
    } finally {
      first.health = null;
    }
  });
});
