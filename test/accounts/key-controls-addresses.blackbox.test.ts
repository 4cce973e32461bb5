/**
 * allowed_cidrs on a real server (docs/api.md "Keys"): without trusted proxies the socket's peer
 * (127.0.0.1 here) is the client and X-Forwarded-For is not believed; with the loopback in
 * `[server] trusted_proxies` the nearest untrusted X-Forwarded-For hop is.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { startFunded } from "../helpers/api.ts";

type Server = Awaited<ReturnType<typeof startFunded>>;
const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) s.cleanup();
});

async function limitedKey(s: Server, allowed_cidrs: string[]): Promise<string> {
  const res = await s.post("/v1/keys", { name: "office", allowed_cidrs });
  expect(res.status).toBe(201);
  return ((await res.json()) as { key: string }).key;
}

const call = (s: Server, key: string, xff?: string) =>
  s.fetch("/v1/account", { key, headers: xff ? { "x-forwarded-for": xff } : {} });

describe("allowed_cidrs on a real server", () => {
  test("no trusted proxy: the peer decides; a forged X-Forwarded-For changes nothing", async () => {
    const s = await startFunded();
    servers.push(s);
    const office = await limitedKey(s, ["198.51.100.0/24"]);
    const res = await call(s, office, "198.51.100.7");
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "address_not_allowed",
      message: expect.stringContaining("127.0.0.1"),
    });
    const local = await limitedKey(s, ["127.0.0.0/8", "::1/128"]);
    expect((await call(s, local, "198.51.100.7")).status).toBe(200);
  });

  test("behind a trusted proxy: the client from X-Forwarded-For decides", async () => {
    const s = await startFunded('[server]\ntrusted_proxies = ["127.0.0.0/8", "::1/128"]\n');
    servers.push(s);
    const office = await limitedKey(s, ["198.51.100.0/24", "2001:db8::/32"]);
    expect((await call(s, office, "198.51.100.7")).status).toBe(200);
    expect((await call(s, office, "2001:db8::5")).status).toBe(200);
    expect((await call(s, office, "203.0.113.9")).status).toBe(403);
    // A client's own hop in front of the proxy's cannot pass: the nearest untrusted one counts.
    expect((await call(s, office, "198.51.100.7, 203.0.113.9")).status).toBe(403);
    // No header: the proxy itself is the client, outside the list.
    expect((await call(s, office)).status).toBe(403);
  });
});
