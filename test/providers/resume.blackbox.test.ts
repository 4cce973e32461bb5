import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { creditDefaultAccount, pollUntil } from "../helpers/api.ts";
import { startServer, type TestServer, tempDir } from "../helpers/server.ts";
import { startMockReplicate, TOKEN } from "./replicate/mock-replicate.ts";

const mock = startMockReplicate();
// The upstream's output link (this machine has no network: a local file server stands in).
const files = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: async () => {
    const { encodePng } = await import("../../src/providers/sandbox/media/index.ts");
    return new Response(encodePng(8, 8, 1), { headers: { "content-type": "image/png" } });
  },
});
const servers: TestServer[] = [];
afterAll(() => {
  for (const s of servers) s.cleanup();
  mock.stop();
  files.stop(true);
});

describe("a restart in the middle of an upstream job", () => {
  test("kill -9 after the upstream accepted the job: the next start resumes it, never submits twice", async () => {
    const dir = tempDir();
    const config = join(dir, "gengate.toml");
    writeFileSync(
      config,
      `[providers.rep]\ntype = "replicate"\nbase_url = "${mock.url}"\napi_key_env = "REP_TOKEN"\npoll_interval_ms = 400\n` +
        `[[models]]\nid = "rep/img"\nkind = "image"\nprovider = "rep"\nupstream_model = "acme/model"\nprice_usd_micro = 1000\nmax = 1\n` +
        `input_schema = { type = "object", required = ["prompt"], properties = { prompt = { type = "string" }, mock_output = { type = "string" } } }\n`,
    );
    const env = { REP_TOKEN: TOKEN };
    const dataDir = join(dir, "data");
    const first = await startServer({ dataDir, args: ["--config", config], env });
    servers.push(first);
    const key = first.defaultKey!;
    await creditDefaultAccount(first, "1");
    const q = (await (
      await first.fetch("/v1/queue/rep/img", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: "a fox", mock_output: `http://127.0.0.1:${files.port}/out.png` }),
      })
    ).json()) as { request_id: string };
    await pollUntil(
      async () => mock.creates().length,
      (n) => n === 1,
    );
    await Bun.sleep(150); // the upstream id is recorded right after the create answer
    first.proc.kill("SIGKILL");
    await first.proc.exited;

    const second = await startServer({ dataDir, args: ["--config", config], env });
    servers.push(second);
    const rec = await pollUntil(
      async () =>
        (await (await second.fetch(`/v1/requests/${q.request_id}`, { key })).json()) as {
          status: string;
          output_urls: string[];
        },
      (r) => r.status === "COMPLETED" || r.status === "FAILED",
      20_000,
    );
    expect(rec.status).toBe("COMPLETED");
    expect(mock.creates().length).toBe(1); // resumed, not resubmitted
    expect((await fetch(rec.output_urls[0]!)).status).toBe(200);
  });
});
