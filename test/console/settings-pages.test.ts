import { describe, expect, test } from "bun:test";
import { base32Decode, hotp, totpStep } from "../../src/lib/totp.ts";
import { consoleApp, PASSWORD } from "./helpers.ts";

const NEW_PASSWORD = "a brand new passphrase";

/** Ann (owner of the default account) signed in, with the settings page's CSRF token. */
async function owner(path = "/console/settings") {
  const c = await consoleApp();
  await c.person("ann@example.com", "owner");
  const b = await c.signedIn("ann@example.com");
  await b.page(path);
  return { c, b };
}

const personId = async (c: Awaited<ReturnType<typeof consoleApp>>, email: string) =>
  (await c.people.members.findPerson(email))!.id;

const codeFor = (secret: string, at = Date.now() / 1000) => hotp(base32Decode(secret)!, totpStep(at));

describe("settings: members", () => {
  test("the list shows email, role and join date; an owner gets the controls", async () => {
    const { c, b } = await owner();
    await c.person("bob@example.com", "member");
    const { status, text } = await b.page("/console/settings");
    expect(status).toBe(200);
    expect(text).toContain('<h2 id="members-h">Members</h2>');
    expect(text).toContain("ann@example.com");
    expect(text).toContain("bob@example.com");
    expect(text).toMatch(/<td>bob@example\.com<\/td>\s*<td>member<\/td>/);
    expect(text).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
    expect(text).toContain("Change role");
    expect(text).toContain("Create invite link");
    expect(text).toContain('aria-current="page">Settings</a>');
    expect(text).toContain('aria-current="page">Account</a>');
  });

  test("an owner invites (post/redirect/get): the one-time link is shown once and works for that email and role", async () => {
    const { c, b } = await owner();
    const before = (await c.people.invites.listInvites()).length;
    const res = await b.post("/console/settings/members/invite", {
      email: "Carol@Example.com",
      role: "owner",
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/settings?done=invited");
    const { text } = await b.page("/console/settings?done=invited");
    expect(text).toContain("This server sends no email");
    const url = /<input id="invite-link" type="text" readonly value="([^"]+)"/.exec(text)![1]!;
    expect(url).toStartWith("http://gengate.test/console/invite/");
    const info = await c.people.invites.inviteInfo(url.split("/").pop()!);
    expect(info).toMatchObject({ email: "carol@example.com", role: "owner", personExists: false });
    // The page itself does not keep it: a reload shows it no more, says so, and invites no one.
    const reloaded = (await b.page("/console/settings?done=invited")).text;
    expect(reloaded).not.toContain(url);
    expect(reloaded).toContain("It was shown once");
    expect((await c.people.invites.listInvites()).length).toBe(before + 1);
    // Accepting it makes Carol an owner of this account.
    await c.people.signIn.acceptInvite(url.split("/").pop()!, PASSWORD, { ip: null, userAgent: null });
    const carol = (await c.people.members.listMembers(c.account.id)).find(
      (m) => m.email === "carol@example.com",
    );
    expect(carol?.role).toBe("owner");
  });

  test("an owner changes a role and removes a member (after the confirmation)", async () => {
    const { c, b } = await owner();
    await c.person("bob@example.com", "member");
    const bob = await personId(c, "bob@example.com");
    const promote = await b.post(`/console/settings/members/${bob}/role`, { role: "owner" });
    expect(promote.status).toBe(303);
    expect(promote.headers.get("location")).toBe("/console/settings?done=role");
    expect((await c.people.members.listMembers(c.account.id)).find((m) => m.personId === bob)?.role).toBe(
      "owner",
    );
    expect((await b.page("/console/settings?done=role")).text).toContain("The role is changed.");
    // Without the confirmation (no JavaScript), the Remove button shows the confirmation page.
    const ask = await b.post(`/console/settings/members/${bob}/remove`, {});
    expect(ask.status).toBe(200);
    const askText = await ask.text();
    expect(askText).toContain("Remove bob@example.com?");
    expect(askText).toContain('<input type="hidden" name="confirm" value="yes">');
    expect((await c.people.members.listMembers(c.account.id)).some((m) => m.personId === bob)).toBe(true);
    const removed = await b.post(`/console/settings/members/${bob}/remove`, { confirm: "yes" });
    expect(removed.status).toBe(303);
    expect(removed.headers.get("location")).toBe("/console/settings?done=removed");
    expect((await c.people.members.listMembers(c.account.id)).some((m) => m.personId === bob)).toBe(false);
  });

  test("a member sees the list but no controls", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com", "owner");
    await c.person("bob@example.com", "member");
    const b = await c.signedIn("bob@example.com");
    const { status, text } = await b.page("/console/settings");
    expect(status).toBe(200);
    expect(text).toContain("ann@example.com");
    expect(text).toContain("bob@example.com");
    for (const control of [
      "Change role",
      "Remove",
      "Create invite link",
      "Reveal secret",
      "Rotate secret",
      "Save threshold",
    ])
      expect(text).not.toContain(`>${control}</button>`);
    expect(text).toContain("Only owners invite, remove members or change roles.");
  });
});

describe("settings: webhook signing secret", () => {
  test("reveal shows the same secret as the API", async () => {
    const { c, b } = await owner();
    const res = await b.post("/console/settings/webhook-secret/reveal", {});
    expect(res.status).toBe(200);
    const text = await res.text();
    const shown = /<input id="webhook-secret" type="text" readonly value="(whsec_[^"]+)"/.exec(text)![1]!;
    const api = (await (await c.request("/v1/account/webhook-secret")).json()) as { secret: string };
    expect(shown).toBe(api.secret);
  });

  test("rotate asks for a confirmation, then makes a new secret the API returns", async () => {
    const { c, b } = await owner();
    const before = await c.ctx.webhookSecrets.get(c.account.id);
    const ask = await b.post("/console/settings/webhook-secret/rotate", {});
    expect(ask.status).toBe(200);
    expect(await ask.text()).toContain("Rotate the webhook secret?");
    expect(await c.ctx.webhookSecrets.get(c.account.id)).toBe(before);
    const res = await b.post("/console/settings/webhook-secret/rotate", { confirm: "yes" });
    // Post/redirect/get: the new secret is shown once by the page the redirect leads to.
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/settings?done=rotated");
    expect(await res.text()).not.toContain("whsec_");
    const { text } = await b.page("/console/settings?done=rotated");
    expect(text).toContain("The secret is rotated.");
    const shown = /<input id="webhook-secret" type="text" readonly value="(whsec_[^"]+)"/.exec(text)![1]!;
    expect(shown).not.toBe(before);
    const api = (await (await c.request("/v1/account/webhook-secret")).json()) as { secret: string };
    expect(api.secret).toBe(shown);
    // The old secret keeps signing during the overlap, as after the API's rotation.
    expect(await c.ctx.webhookSecrets.signingSecrets(c.account.id)).toEqual([shown, before]);
    // Reloading rotates nothing and shows the secret no more.
    const reload = await b.page("/console/settings?done=rotated");
    expect(reload.text).not.toContain("whsec_");
    expect(reload.text).toContain("The new secret was shown once");
    expect(await c.ctx.webhookSecrets.get(c.account.id)).toBe(shown);
  });
});

describe("settings: low-balance alert threshold", () => {
  test("an owner sets a decimal threshold in the account currency, then clears it", async () => {
    const { c, b } = await owner();
    const set = await b.post("/console/settings/alert-threshold", { threshold: "12.5" });
    expect(set.status).toBe(303);
    expect(set.headers.get("location")).toBe("/console/settings?done=threshold");
    expect(await c.ctx.accounts.getAlertThreshold(c.account.id)).toBe(12_500_000n);
    const { text } = await b.page("/console/settings?done=threshold");
    expect(text).toContain("The alert threshold is saved.");
    expect(text).toContain("<strong>12.50 USD</strong>");
    expect(text).toContain('value="12.50"');
    const precise = await b.post("/console/settings/alert-threshold", { threshold: "1,000.000001" });
    expect(precise.status).toBe(303);
    expect(await c.ctx.accounts.getAlertThreshold(c.account.id)).toBe(1_000_000_001n);
    const cleared = await b.post("/console/settings/alert-threshold", { threshold: "" });
    expect(cleared.status).toBe(303);
    expect(await c.ctx.accounts.getAlertThreshold(c.account.id)).toBeNull();
    expect((await b.page("/console/settings")).text).toContain("No alert threshold is set.");
  });

  test("an invalid amount is a 400 with the reason and changes nothing", async () => {
    const { c, b } = await owner();
    await c.ctx.accounts.setAlertThreshold(c.account.id, 5_000_000n);
    for (const threshold of ["abc", "-1", "1.0000001", "1e3"]) {
      const res = await b.post("/console/settings/alert-threshold", { threshold });
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toContain("The alert threshold must be a positive amount");
      // What was typed stays in the field, to be corrected.
      expect(text).toMatch(new RegExp(`name="threshold"[^>]*value="${threshold.replace(".", "\\.")}"`));
      expect(await c.ctx.accounts.getAlertThreshold(c.account.id)).toBe(5_000_000n);
    }
  });

  test("a refused invite keeps the email and role as typed", async () => {
    const { b } = await owner();
    const res = await b.post("/console/settings/members/invite", {
      email: "carol at example",
      role: "owner",
    });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).toContain('role="alert"');
    expect(text).toContain(
      'name="email" autocomplete="off" required maxlength="254" value="carol at example"',
    );
    expect(text).toContain('<option value="owner" selected>owner</option>');
  });
});

describe("settings: password", () => {
  test("a change revokes the other sessions, keeps this one, and the new password signs in", async () => {
    const { c, b } = await owner("/console/settings/security");
    const other = await c.signedIn("ann@example.com");
    const res = await b.post("/console/settings/security/password", {
      current_password: PASSWORD,
      new_password: NEW_PASSWORD,
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/settings/security?done=password");
    expect(await c.people.sessions.resolveSession(b.cookie!)).not.toBeNull();
    expect(await c.people.sessions.resolveSession(other.cookie!)).toBeNull();
    expect((await b.page("/console/settings/security?done=password")).text).toContain(
      "Your other sessions are signed out; this one stays signed in.",
    );
    const old = await c.browser().post("/console/login", { email: "ann@example.com", password: PASSWORD });
    expect(old.status).toBe(401);
    const fresh = await c
      .browser()
      .post("/console/login", { email: "ann@example.com", password: NEW_PASSWORD });
    expect(fresh.status).toBe(303);
  });

  test("a wrong current password (401) or a short new one (400) changes nothing", async () => {
    const { c, b } = await owner("/console/settings/security");
    const other = await c.signedIn("ann@example.com");
    const wrong = await b.post("/console/settings/security/password", {
      current_password: "not my password",
      new_password: NEW_PASSWORD,
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("The current password is incorrect.");
    const short = await b.post("/console/settings/security/password", {
      current_password: PASSWORD,
      new_password: "short",
    });
    expect(short.status).toBe(400);
    expect(await short.text()).toContain("at least 10 characters");
    expect(await c.people.sessions.resolveSession(other.cookie!)).not.toBeNull();
    expect(
      (await c.browser().post("/console/login", { email: "ann@example.com", password: PASSWORD })).status,
    ).toBe(303);
  });
});

describe("settings: two-factor", () => {
  test("set up, confirm with a TOTP code, recovery codes once; sign-in then needs a code; a recovery code works once", async () => {
    const { c, b } = await owner("/console/settings/security");
    expect((await b.page("/console/settings/security")).text).toContain("Set up two-factor");
    const begin = await b.post("/console/settings/security/two-factor/begin", {});
    expect(begin.status).toBe(200);
    const page = await begin.text();
    const secret = /<code class="secret" id="totp-secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!;
    expect(page).toContain(`otpauth://totp/gengate:ann%40example.com?secret=${secret}&amp;issuer=gengate`);
    expect(page).toContain('<label>Code <input name="code"');
    // The QR code is an SVG made on the server, as a data: image (no script, no style in it).
    const qr = /<img class="qr" src="data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)"/.exec(page)![1]!;
    const svg = Buffer.from(qr, "base64").toString();
    expect(svg).toStartWith("<svg ");
    expect(svg).toContain('<path d="M');
    expect(svg).not.toMatch(/style|script|\son\w+=|href/i);

    // Leaving the page and coming back, or pressing Set up again: the same secret until confirmed.
    expect((await b.page("/console/settings/security")).text).toContain(`id="totp-secret">${secret}</code>`);
    const begunAgain = await (await b.post("/console/settings/security/two-factor/begin", {})).text();
    expect(begunAgain).toContain(`id="totp-secret">${secret}</code>`);

    // A wrong code: 400, the same set-up shown again, still off.
    const wrong = await b.post("/console/settings/security/two-factor/enable", { code: "000000" });
    expect(wrong.status).toBe(400);
    const wrongText = await wrong.text();
    expect(wrongText).toContain("The code is incorrect");
    expect(wrongText).toContain(`id="totp-secret">${secret}</code>`);
    expect((await c.people.members.findPerson("ann@example.com"))!.totp_enabled_at).toBeNull();

    const on = await b.post("/console/settings/security/two-factor/enable", { code: codeFor(secret) });
    expect(on.status).toBe(200);
    const onText = await on.text();
    const codes = [...onText.matchAll(/<li>([A-Z2-7]{5}-[A-Z2-7]{5})<\/li>/g)].map((m) => m[1]!);
    expect(codes).toHaveLength(10);
    expect(onText).toContain("shown only this once");
    expect(onText).toContain("Turn off two-factor");
    // Shown once: the page does not show them again.
    const later = (await b.page("/console/settings/security")).text;
    expect(later).not.toContain(codes[0]!);
    expect(later).toContain("Two-factor sign-in is <strong>on</strong>");

    // Sign-in now asks for the code.
    const x = c.browser();
    const step = await x.post("/console/login", { email: "ann@example.com", password: PASSWORD });
    expect(step.status).toBe(200);
    expect(await step.text()).toContain("Two-factor code");
    expect(x.cookie).toBeNull();
    // A recovery code works once.
    const rc = await x.post("/console/login", {
      email: "ann@example.com",
      password: PASSWORD,
      code: codes[3]!,
    });
    expect(rc.status).toBe(303);
    const y = c.browser();
    const again = await y.post("/console/login", {
      email: "ann@example.com",
      password: PASSWORD,
      code: codes[3]!,
    });
    expect(again.status).toBe(401);
    expect(y.cookie).toBeNull();
    // A TOTP code of a later step signs in too (the step used to turn it on cannot be replayed).
    const totp = await c.browser().post("/console/login", {
      email: "ann@example.com",
      password: PASSWORD,
      code: codeFor(secret, Date.now() / 1000 + 30),
    });
    expect(totp.status).toBe(303);
  });

  test("turning it off needs the password", async () => {
    const { c, b } = await owner("/console/settings/security");
    await c.enableTwoFactor("ann@example.com");
    const wrong = await b.post("/console/settings/security/two-factor/disable", {
      password: "not my password",
    });
    expect(wrong.status).toBe(401);
    expect((await c.people.members.findPerson("ann@example.com"))!.totp_enabled_at).not.toBeNull();
    const off = await b.post("/console/settings/security/two-factor/disable", { password: PASSWORD });
    expect(off.status).toBe(303);
    expect(off.headers.get("location")).toBe("/console/settings/security?done=two-factor-off");
    expect((await c.people.members.findPerson("ann@example.com"))!.totp_enabled_at).toBeNull();
    const signIn = await c.browser().post("/console/login", { email: "ann@example.com", password: PASSWORD });
    expect(signIn.status).toBe(303);
  });
});

const UA_ANDROID_FIREFOX = "Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0";

describe("settings: two-factor set-up, cancelled", () => {
  test("Cancel set-up drops the pending secret; the next set-up has a new one", async () => {
    const { c, b } = await owner("/console/settings/security");
    const first = await (await b.post("/console/settings/security/two-factor/begin", {})).text();
    const secret = /id="totp-secret">([A-Z2-7]+)<\/code>/.exec(first)![1]!;
    expect(first).toContain('action="/console/settings/security/two-factor/cancel"');
    const cancel = await b.post("/console/settings/security/two-factor/cancel", {});
    expect(cancel.status).toBe(303);
    expect(cancel.headers.get("location")).toBe("/console/settings/security?done=two-factor-cancelled");
    const page = (await b.page("/console/settings/security?done=two-factor-cancelled")).text;
    expect(page).toContain("Two-factor set-up is cancelled");
    expect(page).toContain("Set up two-factor");
    expect(page).not.toContain(secret);
    expect((await c.people.members.findPerson("ann@example.com"))!.totp_secret).toBeNull();
    const next = await (await b.post("/console/settings/security/two-factor/begin", {})).text();
    expect(next).not.toContain(`id="totp-secret">${secret}</code>`);
    // Without the session's CSRF token nothing is cancelled.
    expect((await b.post("/console/settings/security/two-factor/cancel", {}, { csrf: null })).status).toBe(
      403,
    );
    expect((await c.people.members.findPerson("ann@example.com"))!.totp_secret).not.toBeNull();
  });
});

describe("settings: sessions", () => {
  test("the list marks this session and shows browser and address; one session can be ended", async () => {
    const { c, b } = await owner("/console/settings/security");
    const other = await c.people.signIn.signIn(
      { email: "ann@example.com", password: PASSWORD },
      { ip: "203.0.113.7", userAgent: UA_ANDROID_FIREFOX },
    );
    const { text } = await b.page("/console/settings/security");
    // Readable: browser and system, the raw user agent only in the cell's title.
    expect(text).toContain(`<td title="${UA_ANDROID_FIREFOX}">Firefox 133 on Android</td>`);
    expect(text).toContain("203.0.113.7");
    expect(text.match(/<strong>This session<\/strong>/g)).toHaveLength(1);
    expect(text).toContain(`/console/settings/security/sessions/${other.session.sessionId}/revoke`);
    const res = await b.post(`/console/settings/security/sessions/${other.session.sessionId}/revoke`, {});
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/settings/security?done=session");
    expect(await c.people.sessions.resolveSession(other.token)).toBeNull();
    expect(await c.people.sessions.resolveSession(b.cookie!)).not.toBeNull();
  });

  test("ending this session from the list signs this browser out", async () => {
    const { c, b } = await owner("/console/settings/security");
    const mine = (await c.people.sessions.resolveSession(b.cookie!))!.sessionId;
    const token = b.cookie!;
    const res = await b.post(`/console/settings/security/sessions/${mine}/revoke`, {});
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/login");
    expect(b.cookie).toBeNull();
    expect(await c.people.sessions.resolveSession(token)).toBeNull();
  });

  test("Sign out other sessions keeps this one; Sign out everywhere ends this one too", async () => {
    const { c, b } = await owner("/console/settings/security");
    const o1 = await c.signedIn("ann@example.com");
    const o2 = await c.signedIn("ann@example.com");
    const others = await b.post("/console/settings/security/sessions/revoke-others", {});
    expect(others.status).toBe(303);
    expect(others.headers.get("location")).toBe("/console/settings/security?done=others");
    expect(await c.people.sessions.resolveSession(o1.cookie!)).toBeNull();
    expect(await c.people.sessions.resolveSession(o2.cookie!)).toBeNull();
    expect(await c.people.sessions.resolveSession(b.cookie!)).not.toBeNull();
    const o3 = await c.signedIn("ann@example.com");
    const token = b.cookie!;
    const all = await b.post("/console/settings/security/sessions/revoke-all", {});
    expect(all.status).toBe(303);
    expect(all.headers.get("location")).toBe("/console/login");
    expect(b.cookie).toBeNull();
    expect(await c.people.sessions.resolveSession(token)).toBeNull();
    expect(await c.people.sessions.resolveSession(o3.cookie!)).toBeNull();
  });
});
