import { afterAll, describe, expect, test } from "bun:test";
import { pollUntil } from "../../helpers/api.ts";
import type { TestServer } from "../../helpers/server.ts";
import { accountMoney, boxModel, finalRecord, restartableGateway, submitBox } from "./restartable.ts";
import { startStandInCog } from "./stand-in-cog.ts";

/**
 * kill -9 of gengate while a cog server runs one of its jobs. The webhook URL names gengate's public
 * address, so the restarted server listens on the same port; the stand-in counts the predictions it
 * started (exactly one each time) and retries the final webhook as cog does.
 */
const cog = startStandInCog({ backoffMs: 100 });
const servers: TestServer[] = [];
afterAll(() => {
  for (const s of servers) s.cleanup();
  cog.stop();
});

const gateway = () =>
  restartableGateway(
    `[providers.box]\ntype = "cog"\nbase_url = "${cog.url}"\nconcurrency = 1\n${boxModel('provider = "box"')}`,
    servers,
  );

/** A job that cog accepted and holds, then kill -9 of the gateway. */
async function acceptedThenKilled() {
  const g = await gateway();
  cog.hold();
  const id = await submitBox(g.first);
  await pollUntil(
    async () => cog.started(),
    (ids) => ids.includes(id),
  );
  await Bun.sleep(300); // the upstream id is recorded right after cog's 202
  g.first.proc.kill("SIGKILL");
  await g.first.proc.exited;
  return { g, id };
}

describe("cog: a restart in the middle of a job", () => {
  test("kill -9 after cog accepted the job and before it answered: resumed, completed once, charged once", async () => {
    const { g, id } = await acceptedThenKilled();

    const second = await g.start();
    cog.release(); // cog ends the prediction now and posts its webhook to the restarted gateway
    const rec = await finalRecord(second, id, g.key);
    expect(rec.status).toBe("COMPLETED");
    expect(cog.started().filter((p) => p === id)).toEqual([id]); // never PUT a second time
    expect((await fetch(rec.output_urls![0]!)).status).toBe(200);
    expect(await accountMoney(second, g.key)).toMatchObject({ balance_micro: "999000", held_micro: "0" });
  });

  test("the final webhook comes while gengate is down: cog retries it, the restarted gateway completes the job once", async () => {
    const { g, id } = await acceptedThenKilled();
    cog.release();
    // The prediction ends while nobody listens: its final webhook fails and is retried.
    await pollUntil(
      async () => cog.finalAttempts().filter((a) => a.id === id && a.outcome === "error").length,
      (n) => n >= 2,
      10_000,
    );
    expect(cog.running()).not.toContain(id); // cog has forgotten it: a PUT now would start it again

    const second = await g.start();
    const rec = await finalRecord(second, id, g.key);
    expect(rec.status).toBe("COMPLETED");
    expect(cog.started().filter((p) => p === id)).toEqual([id]);
    expect(
      cog
        .finalAttempts()
        .filter((a) => a.id === id)
        .at(-1)!.outcome,
    ).toBe("ok");
    expect(await accountMoney(second, g.key)).toMatchObject({ balance_micro: "999000", held_micro: "0" });
  });
});
