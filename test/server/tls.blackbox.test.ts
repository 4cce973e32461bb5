import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { runGengate, startServer, type TestServer, tempDir } from "../helpers/server.ts";

/** A self-signed certificate for 127.0.0.1 and localhost (100 years), and its key. */
const FIXTURES = resolve(import.meta.dir, "../compat/fixtures");
const CERT = join(FIXTURES, "tls.test.crt");
const KEY = join(FIXTURES, "tls.test.key");
const CA = readFileSync(CERT, "utf8");

const https = (url: string, init: RequestInit = {}) => fetch(url, { ...init, tls: { ca: CA } });

describe("gengate terminates TLS itself", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ args: ["--tls-cert", CERT, "--tls-key", KEY] });
  });
  afterAll(() => s.cleanup());

  test("it serves https, and every URL it returns is https", async () => {
    expect(s.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect((await https(`${s.url}/healthz`)).status).toBe(200);
    const account = (await (
      await https(`${s.url}/v1/account`, { headers: { authorization: `Key ${s.defaultKey}` } })
    ).json()) as { id: string };
    await https(`${s.url}/admin/v1/accounts/${account.id}/credit`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ amount: "5", reason: "tls test" }),
    });
    // The Python fal-client always builds https:// URLs (QUEUE_URL_FORMAT) and follows the reply's.
    const res = await https(`${s.url}/v1/queue/sandbox/image`, {
      method: "POST",
      headers: {
        authorization: `Key ${s.defaultKey}`,
        "user-agent": "fal-client/0.2.2 (python)",
        "content-type": "application/json",
      },
      body: JSON.stringify({ prompt: "tls", width: 64, height: 64 }),
    });
    expect(res.status).toBe(202);
    const q = (await res.json()) as { request_id: string; status_url: string };
    expect(q.status_url).toBe(`${s.url}/v1/queue/sandbox/image/requests/${q.request_id}/status`);
    const st = await https(`${q.status_url}?logs=false`, {
      headers: { authorization: `Key ${s.defaultKey}` },
    });
    expect([200, 202]).toContain(st.status);
  });

  test("plain http on the TLS port gets no API answer", async () => {
    const plain = s.url.replace("https://", "http://");
    let status: number | null = null;
    try {
      status = (await fetch(`${plain}/healthz`, { signal: AbortSignal.timeout(5000) })).status;
    } catch {}
    expect(status === null || status >= 400).toBe(true);
  });

  test("a certificate the client does not trust is refused by it", async () => {
    await expect(fetch(`${s.url}/healthz`)).rejects.toThrow();
  });
});

describe("TLS settings from the environment and the config file", () => {
  test("GENGATE_TLS_CERT / GENGATE_TLS_KEY", async () => {
    const s = await startServer({ env: { GENGATE_TLS_CERT: CERT, GENGATE_TLS_KEY: KEY } });
    try {
      expect(s.url.startsWith("https://")).toBe(true);
      expect((await https(`${s.url}/healthz`)).status).toBe(200);
    } finally {
      s.cleanup();
    }
  });

  test("server.tls_cert / server.tls_key, with an explicit public_url kept as given", async () => {
    const dir = tempDir();
    const config = join(dir, "gengate.toml");
    writeFileSync(
      config,
      `[server]\ntls_cert = "${CERT}"\ntls_key = "${KEY}"\npublic_url = "https://gen.example.com"\n`,
    );
    const s = await startServer({ args: ["--config", config] });
    try {
      expect((await https(`${s.url}/healthz`)).status).toBe(200);
      expect(s.output()).toContain('"public_url":"https://gen.example.com"');
    } finally {
      s.cleanup();
    }
  });
});

describe("bad TLS settings stop the start with one line, before the data dir is touched", () => {
  const cases: [string, string[], RegExp][] = [
    ["only a certificate", ["--tls-cert", CERT], /tls-cert is set but tls-key is not/],
    ["only a key", ["--tls-key", KEY], /tls-key is set but tls-cert is not/],
    ["a missing file", ["--tls-cert", join(FIXTURES, "missing.crt"), "--tls-key", KEY], /cannot read/],
    ["a key given as the certificate", ["--tls-cert", KEY, "--tls-key", KEY], /not a PEM certificate/],
    [
      "a key that does not match",
      ["--tls-cert", CERT, "--tls-key", resolve(import.meta.dir, "../webhooks/fixtures/hooks.test.key")],
      /tls: cannot use/,
    ],
  ];
  for (const [name, args, message] of cases) {
    test(name, async () => {
      const dir = tempDir();
      const r = await runGengate(["serve", "--port", "0", "--data-dir", join(dir, "data"), ...args]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split("\n").length).toBe(1);
      expect(() => readFileSync(join(dir, "data", "gengate.db"))).toThrow();
    });
  }
});
