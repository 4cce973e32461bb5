import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { creditDefaultAccount, pollUntil } from "../helpers/api.ts";
import { runGengate, startServer, type TestServer, tempDir } from "../helpers/server.ts";
import { parseExposition, sampleValue } from "./parse.ts";

const SCRAPE_TOKEN = "blackbox-scrape-token-0123456789";

function configFile(toml: string): string {
  const path = join(tempDir(), "gengate.toml");
  writeFileSync(path, toml);
  return path;
}

/** The URL the server logged for its metrics listener. */
async function listenerUrl(s: TestServer): Promise<string> {
  const line = await pollUntil(
    async () =>
      s
        .output()
        .split("\n")
        .find((l) => l.includes('"msg":"metrics listening"')),
    (l) => l !== undefined,
  );
  return (JSON.parse(line!) as { url: string }).url;
}

describe("/metrics on the real server", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({
      args: ["--config", configFile(`[metrics]\ntoken = "${SCRAPE_TOKEN}"\nlisten = "127.0.0.1:0"\n`)],
    });
    await creditDefaultAccount(s, "10");
  });
  afterAll(() => s.cleanup());

  const scrape = async (url = `${s.url}/metrics`, token = s.adminToken) => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    return { text, f: parseExposition(text) };
  };

  test("requests are counted by route template and real status, never by raw path", async () => {
    const sub = (await (
      await s.fetch("/v1/queue/sandbox/image", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: "x" }),
      })
    ).json()) as { request_id: string };
    for (let i = 0; i < 3; i++)
      expect((await s.fetch(`/v1/requests/${sub.request_id}/status`)).status).toBe(200);
    const ghost = "01900000-0000-7000-8000-000000000000";
    expect((await s.fetch(`/v1/requests/${ghost}/status`)).status).toBe(404);
    expect((await s.fetch("/v1/no-such-route/secret-in-path")).status).toBe(404);
    expect((await fetch(`${s.url}/metrics`)).status).toBe(401);

    const { text, f } = await scrape();
    const route = "/v1/requests/:id/status";
    const count = (labels: Record<string, string>) =>
      sampleValue(f, "gengate_http_request_duration_seconds_count", labels);
    expect(count({ method: "GET", route, status: "200" })).toBe(3);
    expect(count({ method: "GET", route, status: "404" })).toBe(1);
    expect(count({ method: "GET", route: "unmatched", status: "404" })).toBe(1);
    expect(count({ method: "GET", route: "/metrics", status: "401" })).toBe(1);
    expect(count({ method: "POST", status: "202" })).toBe(1);
    // Bounded cardinality: no id or raw path reaches a label.
    expect(text).not.toContain(sub.request_id);
    expect(text).not.toContain(ghost);
    expect(text).not.toContain("secret-in-path");
    for (const sample of f.get("gengate_http_request_duration_seconds")!.samples)
      expect(sample.labels.route === "unmatched" || sample.labels.route!.startsWith("/")).toBe(true);
  });

  test("the job is counted when it finishes; the database files have a size", async () => {
    const { f } = await pollUntil(
      () => scrape(),
      ({ f }) =>
        (sampleValue(f, "gengate_jobs_finished_total", { model: "sandbox/image", state: "COMPLETED" }) ??
          0) >= 1,
    );
    expect(
      sampleValue(f, "gengate_charged_micro_total", { currency: "USD", model: "sandbox/image" }),
    ).toBeGreaterThan(0);
    // SQLite: the file's size; PostgreSQL: pg_database_size (a fresh database is several MB).
    expect(sampleValue(f, "gengate_database_bytes", { file: "main" })).toBeGreaterThan(0);
    expect(sampleValue(f, "gengate_storage_bytes", { kind: "outputs" })).toBeGreaterThan(0);
    expect(sampleValue(f, "gengate_workers", { provider: "sandbox" })).toBe(8);
  });

  test("the server runs the event-loop lag monitor: its 10 ms timer ticks between two scrapes", async () => {
    const count = async () => sampleValue((await scrape()).f, "gengate_event_loop_lag_seconds_count") ?? -1;
    const first = await count();
    await Bun.sleep(100);
    expect(await count()).toBeGreaterThan(first + 2);
    expect(sampleValue((await scrape()).f, "gengate_event_loop_lag_max_seconds")).toBeGreaterThanOrEqual(0);
  });

  test("the scrape token works on the main port, an API key does not", async () => {
    await scrape(`${s.url}/metrics`, SCRAPE_TOKEN);
    const res = await s.fetch("/metrics");
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
  });

  test("the separate listener serves /metrics with the same tokens, and nothing else", async () => {
    const url = await listenerUrl(s);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(url).not.toBe(`${s.url}/metrics`);
    const none = await fetch(url);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    expect((await fetch(url, { headers: { authorization: "Bearer nope-nope-nope-nope" } })).status).toBe(401);
    await scrape(url, SCRAPE_TOKEN);
    await scrape(url, s.adminToken!);
    const other = await fetch(url.replace("/metrics", "/v1/models"));
    expect(other.status).toBe(404);
    expect(((await other.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });
});

describe('[metrics] listen_auth = "none" and GENGATE_METRICS_TOKEN', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({
      args: ["--config", configFile('[metrics]\nlisten = "127.0.0.1:0"\nlisten_auth = "none"\n')],
      env: { GENGATE_METRICS_TOKEN: SCRAPE_TOKEN },
    });
  });
  afterAll(() => s.cleanup());

  test("the listener answers without a token; the main port still needs one", async () => {
    const url = await listenerUrl(s);
    const open = await fetch(url);
    expect(open.status).toBe(200);
    expect(open.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    parseExposition(await open.text());
    expect((await fetch(`${s.url}/metrics`)).status).toBe(401);
    expect(
      (await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${SCRAPE_TOKEN}` } })).status,
    ).toBe(200);
  });
});

describe("[metrics] listen on a port in use", () => {
  test("the start fails with one line naming metrics.listen and leaves the data dir empty", async () => {
    const holder = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    try {
      const dataDir = join(tempDir(), "data");
      const r = await runGengate([
        "serve",
        "--port",
        "0",
        "--data-dir",
        dataDir,
        "--config",
        configFile(`[metrics]\nlisten = "127.0.0.1:${holder.port}"\n`),
      ]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(`metrics.listen: port ${holder.port} on 127.0.0.1 is already in use`);
      expect(!existsSync(dataDir) || readdirSync(dataDir).length === 0).toBe(true);
    } finally {
      holder.stop(true);
    }
  });
});
