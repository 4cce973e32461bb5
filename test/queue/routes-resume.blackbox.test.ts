import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { creditDefaultAccount, pollUntil } from "../helpers/api.ts";
import { freePort, startServer, type TestServer, tempDir } from "../helpers/server.ts";
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
  const dir = tempDir();
  const config = join(dir, "gengate.toml");
  writeFileSync(
    config,
    `[providers.boxone]\ntype = "cog"\nbase_url = "${first.url}"\nconcurrency = 1\n` +
      `[providers.boxtwo]\ntype = "cog"\nbase_url = "${second.url}"\nconcurrency = 1\n` +
      `[[models]]\nid = "box/img"\nkind = "image"\nprice_usd_micro = 1000\nmax = 1\n` +
      `routes = [{ provider = "boxone", cost_usd_micro = 400 }, { provider = "boxtwo", cost_usd_micro = 500 }]\n` +
      `input_schema = { type = "object", required = ["prompt"], properties = { prompt = { type = "string" } } }\n`,
  );
  const port = String(freePort());
  const dataDir = join(dir, "data");
  const start = async () => {
    const s = await startServer({ dataDir, args: ["--config", config, "--port", port] });
    servers.push(s);
    return s;
  };
  const s = await start();
  await creditDefaultAccount(s, "1");
  return { s, start, key: s.defaultKey! };
}

describe("routes: kill -9 between the upstream's acceptance and its answer", () => {
  test("resumed on the route that accepted it, completed and charged once; the second route gets nothing", async () => {
    const g = await gateway();
    first.hold();
    const res = await g.s.fetch("/v1/queue/box/img", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: "a fox" }),
    });
    expect(res.status).toBe(202);
    const id = ((await res.json()) as { request_id: string }).request_id;
    await pollUntil(
      async () => first.started(),
      (ids) => ids.includes(id),
    );
    await Bun.sleep(300); // the upstream id is recorded right after cog's 202
    g.s.proc.kill("SIGKILL");
    await g.s.proc.exited;

    const again = await g.start();
    first.release();
    const rec = await pollUntil(
      async () =>
        (await (await again.fetch(`/v1/requests/${id}`, { key: g.key })).json()) as Record<string, unknown>,
      (r) => r.status === "COMPLETED" || r.status === "FAILED",
      30_000,
    );
    expect(rec.status).toBe("COMPLETED");
    expect(first.started().filter((p) => p === id)).toEqual([id]);
    expect(second.started()).toEqual([]);
    expect(second.creates()).toBe(0);
    const account = (await (await again.fetch("/v1/account", { key: g.key })).json()) as Record<
      string,
      string
    >;
    expect(account).toMatchObject({ balance_micro: "999000", held_micro: "0" });
    // The client's record names no route.
    expect(JSON.stringify(rec)).not.toMatch(/boxone|boxtwo/);
  });

  test("a cog box answering BUSY to its health check received nothing: the job runs on the second route", async () => {
    const g = await gateway();
    first.health = "BUSY";
    try {
      const creates = first.creates();
      const res = await g.s.fetch("/v1/queue/box/img", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: "a fox" }),
      });
      const id = ((await res.json()) as { request_id: string }).request_id;
      const rec = await pollUntil(
        async () =>
          (await (await g.s.fetch(`/v1/requests/${id}`, { key: g.key })).json()) as Record<string, unknown>,
        (r) => r.status === "COMPLETED" || r.status === "FAILED",
        30_000,
      );
      expect(rec.status).toBe("COMPLETED");
      expect(first.creates()).toBe(creates); // never PUT to the busy box
      expect(second.started()).toContain(id);
    } finally {
      first.health = null;
    }
  });
});
