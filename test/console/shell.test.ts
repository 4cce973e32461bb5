import { describe, expect, test } from "bun:test";
import { gunzipSync } from "node:zlib";
import { createApp } from "../../src/app/app.ts";
import { consoleAssetPaths, consoleAssets } from "../../src/console/assets.ts";
import { formatMoney, formatTime } from "../../src/console/format.ts";
import { CONSOLE_CSP } from "../../src/console/security.ts";
import { consoleApp } from "./helpers.ts";

function expectSecurityHeaders(res: Response) {
  expect(res.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
  expect(res.headers.get("x-frame-options")).toBe("DENY");
  expect(res.headers.get("referrer-policy")).toBe("same-origin");
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
}

describe("console shell: headers and layout", () => {
  test("a page carries the security headers, no-store, lang, a skip link, <main> and the assets", async () => {
    const c = await consoleApp();
    const res = await c.handle("/console/login");
    expect(res.status).toBe(200);
    expectSecurityHeaders(res);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const text = await res.text();
    expect(text).toStartWith("<!doctype html>");
    expect(text).toContain('<html lang="en">');
    expect(text).toContain('<a class="skip-link" href="#main">');
    expect(text).toContain('<main id="main"');
    const paths = consoleAssetPaths();
    expect(text).toContain(`<link rel="stylesheet" href="${paths.css}">`);
    expect(text).toContain(`<script type="module" src="${paths.js}"></script>`);
    // No inline script or style, no event handler attributes (CSP allows none).
    expect(text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(text).not.toMatch(/\sstyle=|\son[a-z]+=/i);
    // htmx: no indicator styles (an inline <style>), no eval.
    expect(text).toContain("&quot;includeIndicatorStyles&quot;:false");
    expect(text).toContain("&quot;allowEval&quot;:false");
  });

  test("the signed-in frame has the nav links, Sign out with the CSRF token, and Admin only for operators", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    await c.person("op@example.com", "owner", true);
    const ann = await c.signedIn("ann@example.com");
    const page = await ann.page("/console/does-not-exist");
    for (const [name, href] of [
      ["Overview", "/console"],
      ["Keys", "/console/keys"],
      ["Usage", "/console/usage"],
      ["Requests", "/console/requests"],
      ["Wallet", "/console/wallet"],
      ["Billing", "/console/billing"],
      ["Studio", "/console/studio"],
      ["Settings", "/console/settings"],
    ]) {
      expect(page.text).toContain(`<a href="${href}">${name}</a>`);
    }
    expect(page.text).not.toContain(">Admin</a>");
    expect(page.text).toMatch(
      /<form class="sign-out" method="post" action="\/console\/logout">\s*<input type="hidden" name="csrf" value="[^"]+">[\s\S]*<button type="submit" class="secondary">Sign out<\/button>/,
    );
    // One account: no switcher.
    expect(page.text).not.toContain('name="account"');
    const op = await c.signedIn("op@example.com");
    expect((await op.page("/console/x")).text).toContain('<a href="/console/admin">Admin</a>');
  });

  test("a person in several accounts gets the account switcher, and switching moves the session", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    const other = await c.ctx.accounts.createAccount("Second team", "RUB");
    const { url } = await c.people.invites.createInvite({
      email: "ann@example.com",
      accountId: other.account.id,
      role: "member",
    });
    await c.people.signIn.acceptInvite(url.split("/").pop()!, "correct horse battery", {
      ip: null,
      userAgent: null,
    });
    const ann = await c.signedIn("ann@example.com");
    const page = await ann.page("/console/x");
    expect(page.text).toContain('<select id="account-switch" name="account" data-autosubmit>');
    expect(page.text).toContain(`value="${other.account.id}"`);
    expect(page.text).toContain("Second team (RUB, member)");
    const res = await ann.post("/console/account", { account: other.account.id });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console");
    expect((await c.people.sessions.resolveSession(ann.cookie!))?.accountId).toBe(other.account.id);
    // An account the person is not in: 404 page, nothing changed.
    const stranger = await c.ctx.accounts.createAccount("Not mine", "USD");
    const refused = await ann.post("/console/account", { account: stranger.account.id });
    expect(refused.status).toBe(404);
    expect(refused.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect((await c.people.sessions.resolveSession(ann.cookie!))?.accountId).toBe(other.account.id);
  });
});

describe("console shell: assets", () => {
  test("assets are served under content-hashed names, immutable, with their types", async () => {
    const c = await consoleApp();
    const paths = consoleAssetPaths();
    expect(paths.js).toMatch(/^\/console\/assets\/app\.[0-9a-f]{12}\.js$/);
    expect(paths.css).toMatch(/^\/console\/assets\/console\.[0-9a-f]{12}\.css$/);
    for (const [path, type] of [
      [paths.js, "text/javascript; charset=utf-8"],
      [paths.css, "text/css; charset=utf-8"],
    ] as const) {
      const res = await c.handle(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(type);
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(res.headers.get("content-encoding")).toBeNull();
      expectSecurityHeaders(res);
      const body = new Uint8Array(await res.arrayBuffer());
      const hash = new Bun.CryptoHasher("sha256").update(body).digest("hex").slice(0, 12);
      expect(path).toContain(`.${hash}.`);
      // gzip when accepted, the same bytes inside.
      const gz = await c.handle(path, { headers: { "accept-encoding": "gzip, deflate, br" } });
      expect(gz.headers.get("content-encoding")).toBe("gzip");
      expect(gz.headers.get("vary")).toBe("accept-encoding");
      expect(new Uint8Array(gunzipSync(new Uint8Array(await gz.arrayBuffer())))).toEqual(body);
      // Revalidation by ETag.
      const etag = res.headers.get("etag")!;
      expect((await c.handle(path, { headers: { "if-none-match": etag } })).status).toBe(304);
    }
  });

  test("the bundles hold htmx, uPlot and our code, and stay within 100 KB gzipped per page", () => {
    const assets = [...consoleAssets().values()];
    const js = new TextDecoder().decode(assets.find((a) => a.path.endsWith(".js"))!.body);
    const css = new TextDecoder().decode(assets.find((a) => a.path.endsWith(".css"))!.body);
    expect(js).toContain("htmx-config"); // htmx reads its <meta> config
    expect(js).toContain("u-legend"); // uPlot
    expect(js).toContain("data-copy"); // our behaviours
    expect(css).toContain(".u-legend"); // uPlot's stylesheet
    expect(css).toContain("prefers-color-scheme:dark");
    const gzipped = assets.reduce(
      (n, a) => n + Bun.gzipSync(a.body as Uint8Array<ArrayBuffer>, { level: 9 }).length,
      0,
    );
    expect(gzipped).toBeLessThanOrEqual(100 * 1024);
  });

  test("an unknown or stale asset name is an HTML 404", async () => {
    const c = await consoleApp();
    const res = await c.handle("/console/assets/app.000000000000.js");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expectSecurityHeaders(res);
  });
});

describe("console shell: front door and error pages", () => {
  test("/ leads to the console", async () => {
    const c = await consoleApp();
    const res = await c.handle("/");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console");
  });

  test("with [console] enabled = false: / leads to /docs and no console route exists", async () => {
    const c = await consoleApp();
    c.ctx.live = { ...c.ctx.live, console: { ...c.ctx.live.console, enabled: false } };
    const app = createApp(c.ctx);
    const get = (p: string) => app.handle(new Request(`http://localhost${p}`, { redirect: "manual" }));
    const res = await get("/");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/docs");
    for (const p of ["/console/login", "/console/x", consoleAssetPaths().js]) {
      const r = await get(p);
      expect(r.status).toBe(404);
      expect(r.headers.get("content-type")).toStartWith("application/json");
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe("not_found");
    }
  });

  test("a reload that turns the console off closes it at once (the routes answer the API's 404)", async () => {
    const c = await consoleApp();
    expect((await c.handle("/console/login")).status).toBe(200);
    c.ctx.live = { ...c.ctx.live, console: { ...c.ctx.live.console, enabled: false } };
    const r = await c.handle("/console/login");
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toStartWith("application/json");
    expect((await c.handle("/")).headers.get("location")).toBe("/docs");
  });

  test("unknown console paths: signed out, a GET goes to sign-in like any page", async () => {
    const c = await consoleApp();
    const res = await c.handle("/console/no/such/page?x=1");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/login?next=%2Fconsole%2Fno%2Fsuch%2Fpage%3Fx%3D1");
    expectSecurityHeaders(res);
  });

  test("unknown console paths are HTML 404 pages for any method; the API keeps its JSON errors", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    const ann = await c.signedIn("ann@example.com");
    const cookie = `gengate_session=${ann.cookie}`;
    for (const init of [{}, { method: "POST" }, { method: "DELETE" }]) {
      const res = await c.handle("/console/no/such/page", { ...init, headers: { cookie } });
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expectSecurityHeaders(res);
      expect(await res.text()).toContain("There is no console page at /console/no/such/page.");
    }
    const api = await c.request("/v1/no-such-route");
    expect(api.status).toBe(404);
    expect(api.headers.get("content-type")).toStartWith("application/json");
    const body = (await api.json()) as { error: { code: string; type: string } };
    expect(body.error.code).toBe("not_found");
    expect(api.headers.get("content-security-policy")).toBeNull();
    const unauth = await c.request("/v1/account", { key: null });
    expect(unauth.status).toBe(401);
    expect(((await unauth.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    const method = await c.request("/v1/account", { method: "DELETE" });
    expect(method.status).toBe(405);
    expect(((await method.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
  });
});

describe("console formatting", () => {
  test("money from micro-units, exact and grouped", () => {
    expect(formatMoney(0n, "USD")).toBe("0.00 USD");
    expect(formatMoney(12_500_000n, "USD")).toBe("12.50 USD");
    expect(formatMoney(1_234_567_890_123n, "RUB")).toBe("1,234,567.890123 RUB");
    expect(formatMoney(-1_000_001n, "USD")).toBe("-1.000001 USD");
    expect(formatMoney(2n ** 62n, "USD")).toBe("4,611,686,018,427.387904 USD");
  });

  test("times in UTC", () => {
    expect(formatTime(0)).toBe("1970-01-01 00:00 UTC");
    expect(formatTime(1_700_000_000_000, "ms")).toBe("2023-11-14 22:13 UTC");
  });
});
