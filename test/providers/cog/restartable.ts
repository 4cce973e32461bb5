import { expect } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { creditDefaultAccount, pollUntil } from "../../helpers/api.ts";
import { freePort, startServer, type TestServer, tempDir } from "../../helpers/server.ts";

/**
 * A real gengate process on `config` (TOML) that a test can kill -9 and start again on the same data
 * dir AND the same port: a cog prediction keeps the webhook URL it was created with, so the restarted
 * server must answer at the same address (test/providers/cog/cog-resume.blackbox.test.ts,
 * test/queue/routes-resume.blackbox.test.ts). Every server started is pushed on `servers` for cleanup.
 */
export async function restartableGateway(config: string, servers: TestServer[]) {
  const dir = tempDir();
  const file = join(dir, "gengate.toml");
  writeFileSync(file, config);
  const port = String(freePort());
  const dataDir = join(dir, "data");
  const start = async () => {
    const s = await startServer({ dataDir, args: ["--config", file, "--port", port] });
    servers.push(s);
    return s;
  };
  const first = await start();
  await creditDefaultAccount(first, "1");
  return { first, start, key: first.defaultKey! };
}

/** The cog tests' model (`box/img`, 1000 micro-USD an image) on the routes `routing` names. */
export function boxModel(routing: string): string {
  return (
    `[[models]]\nid = "box/img"\nkind = "image"\nprice_usd_micro = 1000\nmax = 1\n${routing}\n` +
    `input_schema = { type = "object", required = ["prompt"], properties = { prompt = { type = "string" } } }\n`
  );
}

/** Queues one `box/img` job; its request id. */
export async function submitBox(s: TestServer): Promise<string> {
  const res = await s.fetch("/v1/queue/box/img", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ prompt: "a fox" }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { request_id: string }).request_id;
}

/** The request's record once it is COMPLETED or FAILED (30 s at most). */
export async function finalRecord(s: TestServer, id: string, key: string) {
  return await pollUntil(
    async () =>
      (await (await s.fetch(`/v1/requests/${id}`, { key })).json()) as {
        status: string;
        output_urls?: string[];
      },
    (r) => r.status === "COMPLETED" || r.status === "FAILED",
    30_000,
  );
}

/** The account's balance and held amount, micro-units as strings. */
export async function accountMoney(s: TestServer, key: string) {
  return (await (await s.fetch("/v1/account", { key })).json()) as {
    balance_micro: string;
    held_micro: string;
  };
}
