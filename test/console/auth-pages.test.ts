import { describe, expect, test } from "bun:test";
import { consoleApp, PASSWORD } from "./helpers.ts";

const tokenOf = (url: string) => url.split("/").pop()!;

describe("sign-in", () => {
  test("the form has Email, Password and Sign in; a right password signs in and sets the cookie", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    const b = c.browser();
    const page = await b.page("/console/login");
    expect(page.text).toContain('<label>Email <input type="email" name="email"');
    expect(page.text).toContain('<label>Password <input type="password" name="password"');
    expect(page.text).toContain('<button type="submit">Sign in</button>');
    const res = await b.post("/console/login", { email: "Ann@Example.com ", password: PASSWORD });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console");
    expect(b.cookie).not.toBeNull();
    expect((await c.people.sessions.resolveSession(b.cookie!))?.email).toBe("ann@example.com");
    // Signed in, the sign-in page moves on.
    const again = await b.get("/console/login?next=%2Fconsole%2Fusage");
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe("/console/usage");
  });

  test("next is carried through the form and honoured", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    const b = c.browser();
    const page = await b.page("/console/login?next=%2Fconsole%2Fkeys%3Fpage%3D2");
    expect(page.text).toContain('<input type="hidden" name="next" value="/console/keys?page=2">');
    const res = await b.post("/console/login", {
      email: "ann@example.com",
      password: PASSWORD,
      next: "/console/keys?page=2",
    });
    expect(res.headers.get("location")).toBe("/console/keys?page=2");
  });

  test("a wrong password: 401, one generic message, the email kept", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    const b = c.browser();
    const wrong = await b.post("/console/login", { email: "ann@example.com", password: "not the password" });
    const unknown = await b.post("/console/login", {
      email: "nobody@example.com",
      password: "not the password",
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    const [w, u] = [await wrong.text(), await unknown.text()];
    expect(w).toContain("The email or password is not right.");
    expect(w.replace("ann@example.com", "X")).toBe(u.replace("nobody@example.com", "X"));
    expect(b.cookie).toBeNull();
  });

  test("two-factor: after the right password the code field is shown, then the code signs in", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    const code = await c.enableTwoFactor("ann@example.com");
    const b = c.browser();
    const step = await b.post("/console/login", { email: "ann@example.com", password: PASSWORD });
    expect(step.status).toBe(200);
    const text = await step.text();
    expect(text).toContain("Two-factor code");
    expect(text).toMatch(/<label>Two-factor code[\s\S]*<input name="code"/);
    expect(b.cookie).toBeNull();
    const bad = await b.post("/console/login", {
      email: "ann@example.com",
      password: PASSWORD,
      code: "000000",
    });
    expect(bad.status).toBe(401);
    expect(await bad.text()).toContain("That code is not right");
    const ok = await b.post("/console/login", {
      email: "ann@example.com",
      password: PASSWORD,
      code: await code(),
    });
    expect(ok.status).toBe(303);
    expect(b.cookie).not.toBeNull();
  });
});

describe("sign-up", () => {
  test("open mode: Email and Password, then the Default key once in `New key`, signed in", async () => {
    const c = await consoleApp();
    c.setSignup("open");
    const b = c.browser();
    const page = await b.page("/console/signup");
    expect(page.text).toContain('<label>Email <input type="email" name="email"');
    expect(page.text).toContain('name="password"');
    expect(page.text).not.toContain("Invite code");
    expect(page.text).toContain('<button type="submit">Sign up</button>');
    const res = await b.post("/console/signup", { email: "new@example.com", password: PASSWORD });
    // Post/redirect/get: the key waits in the new session's flash for the welcome page.
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/welcome");
    expect(await res.text()).not.toContain("new-key");
    const welcome = await b.page("/console/welcome");
    expect(welcome.res.headers.get("cache-control")).toBe("no-store");
    const text = welcome.text;
    const key = /<input id="new-key" type="text" readonly value="([^"]+)"/.exec(text)?.[1];
    expect(key).toBeDefined();
    expect(text).toContain('<label for="new-key">New key</label>');
    expect(text).toContain('data-copy="new-key"');
    expect(text).toContain("shown only once");
    expect(text).toContain('href="/console">Continue to Overview</a>');
    // Reloading shows the key no more and creates nothing.
    const reload = await b.page("/console/welcome");
    expect(reload.status).toBe(200);
    expect(reload.text).not.toContain('id="new-key"');
    expect(reload.text).toContain("was shown once");
    // The key works against the API, and the browser is signed in to the new account.
    const api = await c.request("/v1/account", { key: key! });
    expect(api.status).toBe(200);
    const session = await c.people.sessions.resolveSession(b.cookie!);
    expect(session?.email).toBe("new@example.com");
    expect(session?.role).toBe("owner");
  });

  test("invite mode asks for an Invite code; closed mode says sign-up is closed", async () => {
    const c = await consoleApp();
    c.setSignup("invite");
    const invite = await c.browser().page("/console/signup?invite=abc");
    expect(invite.text).toMatch(/<label>Invite code[\s\S]*<input name="invite" value="abc"/);
    c.setSignup("closed");
    const closed = await c.browser().page("/console/signup");
    expect(closed.text).toContain("Sign-up is closed on this server.");
    expect(closed.text).not.toContain("<form");
    const post = await c.browser().post("/console/signup", { email: "x@example.com", password: PASSWORD });
    expect(post.status).toBe(403);
  });

  test("invite mode with a sign-up invite creates the account", async () => {
    const c = await consoleApp();
    c.setSignup("invite");
    const { url } = await c.people.invites.createInvite({});
    const b = c.browser();
    const res = await b.post("/console/signup", {
      email: "inv@example.com",
      password: PASSWORD,
      invite: tokenOf(url),
    });
    expect(res.status).toBe(303);
    expect((await b.page(res.headers.get("location")!)).text).toContain("New key");
    const bad = await c
      .browser()
      .post("/console/signup", { email: "z@example.com", password: PASSWORD, invite: "nope" });
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(await bad.text()).toContain('<p class="notice error" role="alert">');
  });

  test("a short password re-renders the form with the reason", async () => {
    const c = await consoleApp();
    c.setSignup("open");
    const res = await c.browser().post("/console/signup", { email: "s@example.com", password: "short" });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).toContain("at least 10 characters");
    expect(text).toContain('value="s@example.com"');
  });
});

describe("invites", () => {
  test("the invite page shows the email and the account; Set password signs in", async () => {
    const c = await consoleApp();
    const { url } = await c.people.invites.createInvite({
      email: "mia@example.com",
      accountId: c.account.id,
      role: "member",
    });
    const b = c.browser();
    const page = await b.page(`/console/invite/${tokenOf(url)}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("mia@example.com");
    expect(page.text).toContain(c.account.name);
    expect(page.text).toContain("as a member");
    expect(page.text).toContain('<button type="submit">Set password</button>');
    const res = await b.post(`/console/invite/${tokenOf(url)}`, { password: PASSWORD });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console");
    const s = await c.people.sessions.resolveSession(b.cookie!);
    expect(s?.accountId).toBe(c.account.id);
    expect(s?.role).toBe("member");
    // Used once.
    expect((await c.browser().get(`/console/invite/${tokenOf(url)}`)).status).toBe(404);
  });

  test("an invite that makes an account: 303 to the welcome page, its Default key once; a reload repeats nothing", async () => {
    const c = await consoleApp();
    const { url } = await c.people.invites.createInvite({ email: "neo@example.com" });
    const b = c.browser();
    await b.page(`/console/invite/${tokenOf(url)}`);
    const res = await b.post(`/console/invite/${tokenOf(url)}`, { password: PASSWORD });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/welcome");
    const welcome = await b.page("/console/welcome");
    expect(welcome.text).toContain("Welcome to gengate");
    const key = /<input id="new-key" type="text" readonly value="([^"]+)"/.exec(welcome.text)![1]!;
    expect((await c.request("/v1/account", { key })).status).toBe(200);
    const reload = await b.page("/console/welcome");
    expect(reload.text).not.toContain(key);
    expect(reload.text).toContain("was shown once");
    const person = (await c.people.members.findPerson("neo@example.com"))!;
    expect((await c.people.members.accountsOf(person.id)).length).toBe(1);
    // Signed out, the welcome page is the sign-in page.
    expect((await c.browser().get("/console/welcome")).status).toBe(303);
  });

  test("an invite without an email (the first-start owner invite) asks for it", async () => {
    const c = await consoleApp();
    const { url } = await c.people.invites.createInvite({
      accountId: c.account.id,
      role: "owner",
      operator: true,
    });
    const b = c.browser();
    const page = await b.page(`/console/invite/${tokenOf(url)}`);
    expect(page.text).toContain('<label>Email <input type="email" name="email"');
    const res = await b.post(`/console/invite/${tokenOf(url)}`, {
      email: "first@example.com",
      password: PASSWORD,
    });
    expect(res.status).toBe(303);
    const s = await c.people.sessions.resolveSession(b.cookie!);
    expect(s?.email).toBe("first@example.com");
    expect(s?.operator).toBe(true);
  });

  test("an existing person gives their current password to join", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    const other = await c.ctx.accounts.createAccount("Team B", "USD");
    const { url } = await c.people.invites.createInvite({
      email: "ann@example.com",
      accountId: other.account.id,
      role: "owner",
    });
    const b = c.browser();
    const page = await b.page(`/console/invite/${tokenOf(url)}`);
    expect(page.text).toContain("enter your current password");
    const wrong = await b.post(`/console/invite/${tokenOf(url)}`, { password: "wrong password!" });
    expect(wrong.status).toBe(401);
    const ok = await b.post(`/console/invite/${tokenOf(url)}`, { password: PASSWORD });
    expect(ok.status).toBe(303);
    expect((await c.people.sessions.resolveSession(b.cookie!))?.accountId).toBe(other.account.id);
  });

  test("an existing person with two-factor is asked for the code too", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    const code = await c.enableTwoFactor("ann@example.com");
    const other = await c.ctx.accounts.createAccount("Team C", "USD");
    const { url } = await c.people.invites.createInvite({
      email: "ann@example.com",
      accountId: other.account.id,
      role: "member",
    });
    const b = c.browser();
    const step = await b.post(`/console/invite/${tokenOf(url)}`, { password: PASSWORD });
    expect(step.status).toBe(401);
    expect(await step.text()).toMatch(/<label>Two-factor code[\s\S]*<input name="code"/);
    const ok = await b.post(`/console/invite/${tokenOf(url)}`, { password: PASSWORD, code: await code() });
    expect(ok.status).toBe(303);
    expect((await c.people.sessions.resolveSession(b.cookie!))?.accountId).toBe(other.account.id);
  });

  test("a dead invite link is a 404 page", async () => {
    const c = await consoleApp();
    const res = await c.browser().get("/console/invite/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("This link is not valid");
  });
});

describe("password reset and forgotten passwords", () => {
  test("a reset link sets the password, ends every session, and the new one signs in", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    const before = await c.signedIn("ann@example.com");
    const { url } = (await c.people.resets.requestPasswordReset("ann@example.com"))!;
    const b = c.browser();
    const page = await b.page(`/console/reset/${tokenOf(url)}`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(
      /<label>Password\s*<input type="password" name="password" aria-describedby="password-hint"/,
    );
    expect(page.text).toContain('<button type="submit">Set password</button>');
    const res = await b.post(`/console/reset/${tokenOf(url)}`, { password: "a brand new password" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/login?done=reset");
    expect(await c.people.sessions.resolveSession(before.cookie!)).toBeNull();
    expect((await b.page("/console/login?done=reset")).text).toContain("Your password is set.");
    const again = await b.post("/console/login", {
      email: "ann@example.com",
      password: "a brand new password",
    });
    expect(again.status).toBe(303);
    expect((await c.browser().get(`/console/reset/${tokenOf(url)}`)).status).toBe(404);
  });

  test("forgot: the same answer for any email, and how to get a link without email", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    const page = await c.browser().page("/console/forgot");
    expect(page.text).toContain("gengate user reset-password");
    const known = await c.browser().post("/console/forgot", { email: "ann@example.com" });
    const unknown = await c.browser().post("/console/forgot", { email: "nobody@example.com" });
    expect(known.status).toBe(200);
    expect(await known.text()).toBe(await unknown.text());
  });
});

describe("sign-out", () => {
  test("Sign out ends the session on the server and clears the cookie", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com");
    const b = await c.signedIn("ann@example.com");
    const token = b.cookie!;
    await b.page("/console/x");
    const res = await b.post("/console/logout", {});
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/login");
    expect(res.headers.get("set-cookie")).toContain("gengate_session=; Path=/console; Max-Age=0");
    expect(b.cookie).toBeNull();
    expect(await c.people.sessions.resolveSession(token)).toBeNull();
  });
});
