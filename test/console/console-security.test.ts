import { describe, expect, test } from "bun:test";
import { createApp } from "../../src/app/app.ts";
import { CONSOLE_CSP, safeNext } from "../../src/console/security.ts";
import { SESSION_ABSOLUTE_SECONDS, SIGNIN_MAX_FAILURES } from "../../src/people/types.ts";
import { type Browser, consoleApp, ORIGIN, PASSWORD } from "./helpers.ts";

async function signedInAnn() {
  const c = await consoleApp();
  await c.person("ann@example.com");
  const b = await c.signedIn("ann@example.com");
  await b.page("/console/x"); // picks up the CSRF token
  return { c, b };
}

const alive = async (c: Awaited<ReturnType<typeof consoleApp>>, b: Browser) =>
  (await c.people.sessions.resolveSession(b.cookie!)) !== null;

describe("CSRF", () => {
  test("a state change without the session's token is 403 and changes nothing", async () => {
    const { c, b } = await signedInAnn();
    for (const csrf of [
      null,
      "",
      "x".repeat(43),
      `${b.csrf!.slice(0, -1)}${b.csrf!.endsWith("A") ? "B" : "A"}`,
    ]) {
      const res = await b.post("/console/logout", {}, { csrf });
      expect(res.status).toBe(403);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("set-cookie")).toBeNull();
      expect(await res.text()).toContain("nothing was changed");
      expect(await alive(c, b)).toBe(true);
    }
  });

  test("another session's token is refused", async () => {
    const { c, b } = await signedInAnn();
    await c.person("bob@example.com");
    const bob = await c.signedIn("bob@example.com");
    await bob.page("/console/x");
    const res = await b.post("/console/logout", {}, { csrf: bob.csrf });
    expect(res.status).toBe(403);
    expect(await alive(c, b)).toBe(true);
  });

  test("htmx sends the token in X-CSRF-Token", async () => {
    const { c, b } = await signedInAnn();
    const res = await b.post(
      "/console/logout",
      {},
      { csrf: null, headers: { "x-csrf-token": b.csrf!, "hx-request": "true" } },
    );
    expect(res.status).toBe(303);
    expect(await alive(c, b)).toBe(false);
  });
});

describe("Origin", () => {
  test("a state change from another origin is 403 even with the right token", async () => {
    const { c, b } = await signedInAnn();
    for (const origin of [
      "https://evil.example",
      "null",
      "http://gengate.test:8080",
      "https://gengate.test",
    ]) {
      const res = await b.post("/console/logout", {}, { origin });
      expect(res.status).toBe(403);
      expect(await alive(c, b)).toBe(true);
    }
  });

  test("without Origin the Referer decides; with neither the request is refused", async () => {
    const { c, b } = await signedInAnn();
    const foreign = await b.post(
      "/console/logout",
      {},
      { origin: null, referer: "https://evil.example/console/x" },
    );
    expect(foreign.status).toBe(403);
    const neither = await b.post("/console/logout", {}, { origin: null });
    expect(neither.status).toBe(403);
    expect(await alive(c, b)).toBe(true);
    const same = await b.post("/console/logout", {}, { origin: null, referer: `${ORIGIN}/console/x` });
    expect(same.status).toBe(303);
    expect(await alive(c, b)).toBe(false);
  });

  test("sign-in from another origin is refused and sets no cookie (login CSRF)", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    const b = c.browser();
    const res = await b.post(
      "/console/login",
      { email: "ann@example.com", password: PASSWORD },
      { origin: "https://evil.example" },
    );
    expect(res.status).toBe(403);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(b.cookie).toBeNull();
  });
});

describe("keys and cookies stay on their side", () => {
  test("an API key is never a console sign-in", async () => {
    const c = await consoleApp();
    const auth = { authorization: `Key ${c.key}` };
    const page = await c.handle("/console/settings", { headers: auth });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toStartWith("/console/login");
    const bearer = await c.handle("/console/keys", { headers: { authorization: `Bearer ${c.key}` } });
    expect(bearer.status).toBe(303);
    const post = await c.handle("/console/logout", {
      method: "POST",
      headers: { ...auth, origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
      body: "",
    });
    expect(post.status).toBe(303);
    expect(post.headers.get("location")).toBe("/console/login");
  });

  test("the console cookie is never an API credential", async () => {
    const { c, b } = await signedInAnn();
    const res = await c.request("/v1/account", {
      key: null,
      headers: { cookie: `gengate_session=${b.cookie}` },
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    const admin = await c.request("/admin/v1/accounts", {
      key: null,
      headers: { cookie: `gengate_session=${b.cookie}` },
    });
    expect(admin.status).toBe(401);
  });
});

describe("the session cookie", () => {
  test("HttpOnly, SameSite=Lax, Path=/console, Max-Age to the absolute expiry, no Secure on http", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    const res = await c.browser().post("/console/login", { email: "ann@example.com", password: PASSWORD });
    const cookie = res.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^gengate_session=[A-Za-z0-9_-]{20,}; /);
    expect(cookie).toContain("; Path=/console;");
    expect(cookie).toContain("; HttpOnly");
    expect(cookie).toContain("; SameSite=Lax");
    expect(cookie).not.toContain("Secure");
    const maxAge = Number(/Max-Age=(\d+)/.exec(cookie)![1]);
    expect(maxAge).toBeGreaterThan(SESSION_ABSOLUTE_SECONDS - 60);
    expect(maxAge).toBeLessThanOrEqual(SESSION_ABSOLUTE_SECONDS);
  });

  test("Secure when the public URL is https", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    c.ctx.publicUrl = "https://gengate.test";
    const app = createApp(c.ctx);
    const res = await app.handle(
      new Request("http://localhost/console/login", {
        method: "POST",
        redirect: "manual",
        headers: { origin: "https://gengate.test", "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ email: "ann@example.com", password: PASSWORD }).toString(),
      }),
    );
    expect(res.status).toBe(303);
    expect(res.headers.get("set-cookie")).toEndWith("; Secure");
  });

  test("a revoked, unknown or malformed cookie is signed out", async () => {
    const c = await consoleApp();
    for (const cookie of [
      "gengate_session=nope",
      "gengate_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
      "gengate_session=<script>",
    ]) {
      const res = await c.handle("/console/settings", { headers: { cookie } });
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toStartWith("/console/login");
    }
  });
});

describe("open redirects", () => {
  test("next only ever leads to a console path on this origin", () => {
    for (const bad of [
      "//evil.example",
      "https://evil.example/console",
      "/\\evil.example",
      "/console\\..\\x",
      "javascript:alert(1)",
      "/console/../admin/v1/accounts",
      "/consoleevil",
      "console",
      "/console\n/x",
      "",
    ]) {
      expect(safeNext(bad)).toBeNull();
    }
    expect(safeNext("/console/keys?page=2")).toBe("/console/keys?page=2");
    expect(safeNext("/console")).toBe("/console");
  });

  test("a foreign next after sign-in goes to the console instead", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    for (const next of ["//evil.example/", "https://evil.example/console", "/console/../x"]) {
      const b = c.browser();
      const page = await b.page(`/console/login?next=${encodeURIComponent(next)}`);
      expect(page.text).not.toContain('name="next"');
      const res = await b.post("/console/login", { email: "ann@example.com", password: PASSWORD, next });
      expect(res.headers.get("location")).toBe("/console");
    }
  });
});

describe("throttling", () => {
  test("too many failed sign-ins: 429 page with Retry-After", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    const b = c.browser();
    for (let i = 0; i < SIGNIN_MAX_FAILURES; i++) {
      expect(
        (await b.post("/console/login", { email: "ann@example.com", password: `wrong password ${i}` }))
          .status,
      ).toBe(401);
    }
    const res = await b.post("/console/login", { email: "ann@example.com", password: PASSWORD });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
    expect(await res.text()).toContain("Too many failed sign-in attempts");
    expect(b.cookie).toBeNull();
  });
});

describe("escaping", () => {
  test("<script> in any value is rendered as text", async () => {
    const c = await consoleApp();
    const evil = "<script>alert(1)</script>";
    // An account name (the switcher, the invite page).
    await c.person("ann@example.com");
    const other = await c.ctx.accounts.createAccount(evil, "USD");
    const { url } = await c.people.invites.createInvite({
      email: "ann@example.com",
      accountId: other.account.id,
      role: "owner",
    });
    const invitePage = await c.browser().page(`/console/invite/${url.split("/").pop()}`);
    expect(invitePage.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(invitePage.text).not.toContain(evil);
    await c.people.signIn.acceptInvite(url.split("/").pop()!, PASSWORD, { ip: null, userAgent: null });
    const b = await c.signedIn("ann@example.com");
    const page = await b.page("/console/x");
    expect(page.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt; (USD, owner)");
    expect(page.text).not.toContain(evil);
    // Form values echoed back, and paths echoed in error pages.
    c.setSignup("open");
    const signup = await c
      .browser()
      .post("/console/signup", { email: `"><script>alert(1)</script>`, password: PASSWORD });
    const st = await signup.text();
    expect(st).not.toContain("<script>alert(1)");
    expect(st).toContain("&quot;&gt;&lt;script&gt;");
    const notFound = await c.handle("/console/%3Cscript%3Ealert(1)%3C%2Fscript%3E");
    expect(await notFound.text()).not.toContain("<script>alert");
    const login = await c.browser().post("/console/login", { email: evil, password: "whatever123" });
    expect(await login.text()).not.toContain(evil);
  });
});

describe("CSP on every console response", () => {
  test("pages, redirects, errors and assets all carry it", async () => {
    const { c, b } = await signedInAnn();
    const { url } = await c.people.invites.createInvite({ email: "z@example.com" });
    const anon = c.browser();
    const responses: Response[] = [
      await anon.get("/console/login"),
      await anon.get("/console/signup"),
      await anon.get("/console/forgot"),
      await anon.get(`/console/invite/${url.split("/").pop()}`),
      await anon.get("/console/invite/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
      await anon.get("/console/reset/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
      await anon.get("/console/settings"),
      await anon.post("/console/forgot", { email: "a@example.com" }),
      await anon.post(
        "/console/login",
        { email: "a@example.com", password: "x" },
        { origin: "https://evil.example" },
      ),
      await b.get("/console/login"),
      await b.get("/console/nowhere"),
      await b.post("/console/logout", {}, { csrf: null }),
      await c.handle(/href="(\/console\/assets\/[^"]+)"/.exec((await anon.page("/console/login")).text)![1]!),
    ];
    for (const res of responses) {
      expect(res.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
      expect(res.headers.get("x-frame-options")).toBe("DENY");
    }
  });
});
