/**
 * The console's client address (issue 31): it was always null (the kit read a `server` the route
 * context does not have), so sign-in throttling per address never applied (password spraying) and
 * Settings -> Sessions said "Address: unknown" for everyone. In process, with the socket's peer
 * given the way Bun's server gives it (createApp's `peers`); the real server is in
 * client-address.blackbox.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { parseCidr } from "../../src/lib/addresses.ts";
import { SIGNIN_MAX_FAILURES } from "../../src/people/types.ts";
import { consoleApp, PASSWORD } from "./helpers.ts";

/** A console app whose requests come from the socket address `peer.address` (changeable). */
async function appFrom(trustedProxies: string[] = []) {
  const peer = { address: "198.51.100.20" };
  const c = await consoleApp({ peers: { requestIP: () => ({ address: peer.address }) } });
  c.ctx.live = { ...c.ctx.live, trustedProxies: trustedProxies.map(parseCidr) };
  await c.person("ann@example.com");
  return { ...c, peer };
}

/** Ten failed sign-ins with ten different emails (password spraying), each with `headers`. */
async function spray(c: Awaited<ReturnType<typeof appFrom>>, headers: (i: number) => Record<string, string>) {
  for (let i = 0; i < SIGNIN_MAX_FAILURES; i++) {
    const res = await c
      .browser()
      .post(
        "/console/login",
        { email: `guess${i}@example.com`, password: PASSWORD },
        { headers: headers(i) },
      );
    expect(res.status).toBe(401);
  }
}

/** Ann signs in with the right password from a new browser, sending `headers`. */
async function annSignsIn(c: Awaited<ReturnType<typeof appFrom>>, headers: Record<string, string> = {}) {
  const b = c.browser();
  const res = await b.post("/console/login", { email: "ann@example.com", password: PASSWORD }, { headers });
  return { b, res };
}

const sessionsPage = async (c: Awaited<ReturnType<typeof appFrom>>, headers: Record<string, string> = {}) => {
  const { b, res } = await annSignsIn(c, headers);
  expect(res.status).toBe(303);
  return (await b.page("/console/settings/security")).text;
};

describe("sign-in throttling per address", () => {
  test("ten emails sprayed from one address: that address is throttled, another is not", async () => {
    const c = await appFrom();
    await spray(c, () => ({}));
    const { res: limited } = await annSignsIn(c);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await limited.text()).toContain("Too many failed sign-in attempts");
    c.peer.address = "203.0.113.50";
    expect((await annSignsIn(c)).res.status).toBe(303);
  });

  test("a forged X-Forwarded-For from an untrusted peer neither evades the throttle nor is recorded", async () => {
    const c = await appFrom();
    await spray(c, (i) => ({ "x-forwarded-for": `192.0.2.${i + 1}` }));
    const { res: limited } = await annSignsIn(c, { "x-forwarded-for": "192.0.2.200" });
    expect(limited.status).toBe(429);
    c.peer.address = "203.0.113.50";
    const page = await sessionsPage(c, { "x-forwarded-for": "192.0.2.99" });
    expect(page).toContain("<td>203.0.113.50</td>");
    expect(page).not.toContain("192.0.2.99");
  });

  test("the same forged header from a peer that is not among trusted_proxies is still ignored", async () => {
    const c = await appFrom(["10.0.0.0/8"]);
    await spray(c, (i) => ({ "x-forwarded-for": `192.0.2.${i + 1}` }));
    const { res: limited } = await annSignsIn(c);
    expect(limited.status).toBe(429);
  });

  test("behind a trusted proxy: the header's client is throttled and recorded, other clients are not", async () => {
    const c = await appFrom(["10.0.0.0/8"]);
    c.peer.address = "10.0.0.2";
    // The client's own "1.1.1.1" on the left is its own writing; the proxy appended the real one.
    await spray(c, (i) => ({ "x-forwarded-for": `1.1.1.${i}, 198.51.100.77` }));
    const { res: limited } = await annSignsIn(c, { "x-forwarded-for": "198.51.100.77" });
    expect(limited.status).toBe(429);
    const page = await sessionsPage(c, { "x-forwarded-for": "198.51.100.78" });
    expect(page).toContain("<td>198.51.100.78</td>");
    expect(page).not.toContain("10.0.0.2");
  });
});

describe("Settings -> Sessions", () => {
  test("shows the address the person signed in from", async () => {
    const c = await appFrom();
    const page = await sessionsPage(c);
    expect(page).toContain("<td>198.51.100.20</td>");
    expect(page).not.toMatch(/<td>unknown<\/td>\s*<td>(<strong>This session)/);
  });
});
