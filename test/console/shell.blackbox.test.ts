/**
 * The console shell through a real process (CI reruns this file against the compiled binary, where
 * the assets come from the macro inlined at build time).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gunzipSync } from "node:zlib";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});

afterAll(() => server?.cleanup());

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, { redirect: "manual", headers });

describe("console shell (black box)", () => {
  test("/ leads to the console; a signed-out page visit to sign-in", async () => {
    const res = await get("/");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console");
    const page = await get("/console/settings");
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/console/login?next=%2Fconsole%2Fsettings");
  });

  test("the sign-in page and its hashed assets are served with their headers", async () => {
    const res = await get("/console/login");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toStartWith("default-src 'self'; script-src 'self';");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const text = await res.text();
    expect(text).toContain('<button type="submit">Sign in</button>');
    const paths = [
      ...text.matchAll(/(?:href|src)="(\/console\/assets\/[a-z]+\.[0-9a-f]{12}\.(?:js|css))"/g),
    ].map((m) => m[1]!);
    expect(paths.length).toBe(2);
    let gzipped = 0;
    for (const p of paths) {
      const plain = await get(p, { "accept-encoding": "identity" });
      expect(plain.status).toBe(200);
      expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(plain.headers.get("content-type")).toStartWith(
        p.endsWith(".js") ? "text/javascript" : "text/css",
      );
      const body = new Uint8Array(await plain.arrayBuffer());
      expect(body.length).toBeGreaterThan(1000);
      // Bun's fetch inflates gzip itself; ask for it and compare the bytes.
      const gz = await fetch(`${server.url}${p}`, {
        headers: { "accept-encoding": "gzip" },
        decompress: false,
      });
      expect(gz.headers.get("content-encoding")).toBe("gzip");
      const raw = new Uint8Array(await gz.arrayBuffer());
      gzipped += raw.length;
      expect(new Uint8Array(gunzipSync(raw))).toEqual(body);
    }
    expect(gzipped).toBeLessThanOrEqual(100 * 1024);
  });

  test("a cross-origin form post is refused; the API keeps its JSON errors", async () => {
    const res = await fetch(`${server.url}/console/login`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: "https://evil.example", "content-type": "application/x-www-form-urlencoded" },
      body: "email=a%40example.com&password=whatever123",
    });
    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("set-cookie")).toBeNull();
    const api = await server.fetch("/v1/nope");
    expect(api.status).toBe(404);
    expect(((await api.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });

  test("the first start's owner invite: set a password, signed in, sign out", async () => {
    expect(server.ownerInvite).not.toBeNull();
    const path = new URL(server.ownerInvite!).pathname;
    const page = await get(path);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<button type="submit">Set password</button>');
    const form = (fields: Record<string, string>, cookie?: string) =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        redirect: "manual",
        headers: {
          origin: new URL(server.url).origin,
          "content-type": "application/x-www-form-urlencoded",
          ...(cookie ? { cookie } : {}),
        },
        body: new URLSearchParams(fields).toString(),
      });
    const res = await form({ email: "owner@example.com", password: "a long enough password" });
    expect(res.status).toBe(303);
    const cookie = /^(gengate_session=[^;]+)/.exec(res.headers.get("set-cookie") ?? "")?.[1];
    expect(cookie).toBeDefined();
    const signedIn = await get("/console/nowhere", { cookie: cookie! });
    expect(signedIn.status).toBe(404);
    const text = await signedIn.text();
    expect(text).toContain('<a href="/console/admin">Admin</a>');
    const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(text)![1]!;
    const out = await fetch(`${server.url}/console/logout`, {
      method: "POST",
      redirect: "manual",
      headers: {
        origin: new URL(server.url).origin,
        cookie: cookie!,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: `csrf=${encodeURIComponent(csrf)}`,
    });
    expect(out.status).toBe(303);
    expect((await get("/console/nowhere", { cookie: cookie! })).status).toBe(303);
  });
});
