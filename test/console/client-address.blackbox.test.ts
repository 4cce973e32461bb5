/**
 * The console's client address through the real server (issue 31): the socket's peer from Bun's
 * server, X-Forwarded-For believed only from `[server] trusted_proxies`. Before, the address was
 * always null: no throttling per address, "unknown" on Settings -> Sessions.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SIGNIN_MAX_FAILURES } from "../../src/people/types.ts";
import { startServer, type TestServer, tempDir } from "../helpers/server.ts";

const PASSWORD = "a long enough password";
const servers: TestServer[] = [];
afterAll(() => {
  for (const s of servers) s.cleanup();
});

async function start(configToml = ""): Promise<TestServer> {
  const config = join(tempDir(), "gengate.toml");
  writeFileSync(config, configToml);
  const s = await startServer({ args: ["--config", config] });
  servers.push(s);
  return s;
}

function post(
  s: TestServer,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) {
  return fetch(`${s.url}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: {
      origin: new URL(s.url).origin,
      "content-type": "application/x-www-form-urlencoded",
      ...headers,
    },
    body: new URLSearchParams(fields).toString(),
  });
}

/** The owner's first sign-up through the first start's invite; the Sessions page it then sees. */
async function ownerSessions(s: TestServer, headers: Record<string, string> = {}): Promise<string> {
  const res = await post(
    s,
    new URL(s.ownerInvite!).pathname,
    { email: "owner@example.com", password: PASSWORD },
    headers,
  );
  expect(res.status).toBe(303);
  const cookie = /^(gengate_session=[^;]+)/.exec(res.headers.get("set-cookie") ?? "")![1]!;
  const page = await fetch(`${s.url}/console/settings/security`, { headers: { cookie } });
  expect(page.status).toBe(200);
  return await page.text();
}

describe("console client address (black box)", () => {
  test("the socket's peer: shown on Sessions, throttled when spraying, a forged X-Forwarded-For ignored", async () => {
    const s = await start();
    const sessions = await ownerSessions(s, { "x-forwarded-for": "192.0.2.99" });
    expect(sessions).toContain("<td>127.0.0.1</td>");
    expect(sessions).not.toContain("192.0.2.99");
    for (let i = 0; i < SIGNIN_MAX_FAILURES; i++) {
      const res = await post(
        s,
        "/console/login",
        { email: `guess${i}@example.com`, password: PASSWORD },
        { "x-forwarded-for": `192.0.2.${i + 1}` },
      );
      expect(res.status).toBe(401);
    }
    const limited = await post(
      s,
      "/console/login",
      { email: "owner@example.com", password: PASSWORD },
      { "x-forwarded-for": "192.0.2.200" },
    );
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  }, 60_000);

  test("behind a trusted proxy: the client X-Forwarded-For names", async () => {
    const s = await start('[server]\ntrusted_proxies = ["127.0.0.1/32", "::1/128"]\n');
    const sessions = await ownerSessions(s, { "x-forwarded-for": "1.1.1.1, 198.51.100.7" });
    expect(sessions).toContain("<td>198.51.100.7</td>");
    expect(sessions).not.toContain("<td>127.0.0.1</td>");
  }, 60_000);
});
