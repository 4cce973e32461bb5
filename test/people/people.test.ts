import { describe, expect, test } from "bun:test";
import { INVITE_TTL_SECONDS, SESSION_ABSOLUTE_SECONDS } from "../../src/people/types.ts";
import { CLIENT, PASSWORD, peopleFixture, tokenOf } from "./helpers.ts";

describe("invites", () => {
  test("an operator invite without an account: the person sets a password and gets an account, its owner, and a Default key", async () => {
    const f = peopleFixture();
    const invite = await f.people.invites.createInvite({ email: "Ann@Example.com " });
    expect(invite.url).toMatch(/^http:\/\/gengate\.test\/console\/invite\/[A-Za-z0-9_-]{43}$/);
    expect(invite.expiresAt).toBe(f.clock.seconds() + INVITE_TTL_SECONDS);
    expect(await f.people.invites.inviteInfo(tokenOf(invite.url))).toEqual({
      email: "ann@example.com",
      accountName: null,
      role: "owner",
      personExists: false,
    });
    const r = await f.people.signIn.acceptInvite(tokenOf(invite.url), PASSWORD, CLIENT);
    const s = r.session.session;
    expect(s).toMatchObject({ email: "ann@example.com", role: "owner", operator: false, twoFactor: false });
    expect(r.key).toMatch(/^gk_/);
    const principal = (await f.accounts.authenticate(r.key!))!;
    expect(principal.accountId).toBe(s.accountId!);
    expect(principal.canManage).toBe(true);
    expect(await f.accounts.isKeyCreatedBy(s.accountId!, r.keyId!, s.personId)).toBe(true);
    expect(await f.accounts.getAccount(s.accountId!)).toMatchObject({
      name: "ann@example.com",
      currency: "USD",
    });
    expect(await f.people.members.accountsOf(s.personId)).toEqual([
      { accountId: s.accountId!, name: "ann@example.com", currency: "USD", role: "owner" },
    ]);
    expect(r.session.expiresAt).toBe(f.clock.seconds() + SESSION_ABSOLUTE_SECONDS);
    expect(await f.people.sessions.resolveSession(r.session.token, CLIENT)).toEqual(s);
    // Used: the link is gone.
    expect(await f.people.invites.inviteInfo(tokenOf(invite.url))).toBeNull();
  });

  test("an invite into an account joins it with the role; an existing person gives their current password", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const bob = await f.person("bob@example.com", "bobs password 123");
    const invite = await f.people.invites.createInvite({
      email: "bob@example.com",
      accountId: ann.accountId,
      role: "member",
      createdBy: ann.personId,
    });
    expect(await f.people.invites.inviteInfo(tokenOf(invite.url))).toEqual({
      email: "bob@example.com",
      accountName: "ann@example.com",
      role: "member",
      personExists: true,
    });
    const r = await f.people.signIn.acceptInvite(tokenOf(invite.url), "bobs password 123", CLIENT);
    expect(r.key).toBeNull();
    expect(r.session.session).toMatchObject({
      personId: bob.personId,
      accountId: ann.accountId,
      role: "member",
    });
    expect((await f.people.members.accountsOf(bob.personId)).map((a) => a.role)).toEqual(["owner", "member"]);
    expect((await f.people.members.listMembers(ann.accountId)).map((m) => `${m.email}:${m.role}`)).toEqual([
      "ann@example.com:owner",
      "bob@example.com:member",
    ]);
  });

  test("an email-less operator invite (the first-start one) takes the email at acceptance and sets the operator flag", async () => {
    const f = peopleFixture();
    const { account } = await f.accounts.createAccount("default", "USD");
    const invite = await f.people.invites.createInvite({
      accountId: account.id,
      role: "owner",
      operator: true,
    });
    expect(await f.people.invites.inviteInfo(tokenOf(invite.url))).toMatchObject({
      email: null,
      accountName: "default",
    });
    const r = await f.people.signIn.acceptInvite(tokenOf(invite.url), PASSWORD, CLIENT, "Op@Example.com");
    expect(r.session.session).toMatchObject({
      email: "op@example.com",
      operator: true,
      accountId: account.id,
      role: "owner",
    });
  });

  test("operators list people with memberships and invites with their state, and revoke unused invites", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const pending = await f.people.invites.createInvite({
      email: "cy@example.com",
      accountId: ann.accountId,
    });
    const revoked = await f.people.invites.createInvite({ email: "dee@example.com" });
    await f.people.invites.revokeInvite(revoked.id);
    expect(await f.people.invites.inviteInfo(tokenOf(revoked.url))).toBeNull();
    const people = await f.people.members.listPeople();
    expect(people).toEqual([
      {
        id: ann.personId,
        email: "ann@example.com",
        operator: false,
        twoFactor: false,
        hasPassword: true,
        createdAt: f.clock.seconds(),
        disabledAt: null,
        disabledReason: null,
        memberships: [{ accountId: ann.accountId, role: "owner" }],
      },
    ]);
    const states = Object.fromEntries((await f.people.invites.listInvites()).map((i) => [i.email, i.state]));
    expect(states).toEqual({
      "ann@example.com": "used",
      "cy@example.com": "pending",
      "dee@example.com": "revoked",
    });
    expect((await f.people.invites.listInvites()).find((i) => i.id === pending.id)).toMatchObject({
      accountId: ann.accountId,
      role: "member",
    });
  });
});

describe("sign-up", () => {
  test("open mode: anyone signs up; the account takes the configured currency and a name from the email", async () => {
    const f = peopleFixture({ signup: "open", currency: "RUB" });
    const r = await f.people.signIn.signUp({ email: "new@example.com", password: PASSWORD }, CLIENT);
    expect(await f.accounts.getAccount(r.accountId)).toMatchObject({
      name: "new@example.com",
      currency: "RUB",
    });
    expect((await f.accounts.authenticate(r.key))?.keyId).toBe(r.keyId);
    expect((await f.accounts.listKeys(r.accountId)).map((k) => [k.name, k.created_by])).toEqual([
      ["Default", r.session.session.personId],
    ]);
    expect(r.session.session).toMatchObject({ accountId: r.accountId, role: "owner" });
  });

  test("signing up again with the same email and its password gives the person a second account", async () => {
    const f = peopleFixture({ signup: "open" });
    const first = await f.people.signIn.signUp({ email: "new@example.com", password: PASSWORD }, CLIENT);
    const second = await f.people.signIn.signUp({ email: "NEW@example.com", password: PASSWORD }, CLIENT);
    expect(second.session.session.personId).toBe(first.session.session.personId);
    expect(second.accountId).not.toBe(first.accountId);
    expect((await f.accounts.getAccount(second.accountId))?.name).toBe("new@example.com (2)");
    expect(await f.people.members.accountsOf(first.session.session.personId)).toHaveLength(2);
  });

  test("invite mode: a sign-up invite (code) lets the person sign up; an owner's invite works too", async () => {
    const f = peopleFixture({ signup: "invite" });
    const code = await f.people.invites.createInvite({});
    const r = await f.people.signIn.signUp(
      { email: "a@example.com", password: PASSWORD, invite: tokenOf(code.url) },
      CLIENT,
    );
    expect(r.session.session.role).toBe("owner");
    const owner = await f.person("owner@example.com");
    const join = await f.people.invites.createInvite({
      email: "m@example.com",
      accountId: owner.accountId,
      createdBy: owner.personId,
    });
    const m = await f.people.signIn.acceptInvite(tokenOf(join.url), PASSWORD, CLIENT);
    expect(m.session.session).toMatchObject({ accountId: owner.accountId, role: "member" });
  });

  test("the mode is read at each call: a reload that swaps the settings applies at once", async () => {
    const f = peopleFixture({ signup: "invite" });
    await expect(
      f.people.signIn.signUp({ email: "x@example.com", password: PASSWORD }, CLIENT),
    ).rejects.toMatchObject({
      code: "forbidden",
    });
    f.consoleSettings.signup = "open";
    const r = await f.people.signIn.signUp({ email: "x@example.com", password: PASSWORD }, CLIENT);
    expect(r.key).toMatch(/^gk_/);
  });
});

describe("sign-in and sessions", () => {
  test("sign in, resolve, switch account, list and revoke sessions, sign out", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const other = await f.person("bob@example.com");
    await f.people.invites.createInvite({ email: "ann@example.com", accountId: other.accountId });
    const join = await f.people.invites.createInvite({
      email: "ann@example.com",
      accountId: other.accountId,
      role: "owner",
    });
    await f.people.signIn.acceptInvite(tokenOf(join.url), PASSWORD, CLIENT);

    const s = await f.people.signIn.signIn({ email: " ANN@example.com", password: PASSWORD }, CLIENT);
    expect(s.session.personId).toBe(ann.personId);
    expect(s.session.accountId).toBe(ann.accountId);
    const switched = await f.people.sessions.switchAccount(
      s.session.sessionId,
      ann.personId,
      other.accountId,
    );
    expect(switched).toMatchObject({ accountId: other.accountId, role: "owner" });
    expect((await f.people.sessions.resolveSession(s.token))?.accountId).toBe(other.accountId);

    const ids = (await f.people.sessions.listSessions(ann.personId)).map((x) => x.id);
    expect(ids).toContain(s.session.sessionId);
    expect(ids.length).toBe(3); // the invite acceptances signed in too
    const session = (await f.people.sessions.listSessions(ann.personId)).find(
      (x) => x.id === s.session.sessionId,
    )!;
    expect(session).toMatchObject({ ip: CLIENT.ip, userAgent: CLIENT.userAgent });

    await f.people.sessions.revokeSession(ann.personId, ann.session.session.sessionId);
    expect(await f.people.sessions.resolveSession(ann.session.token)).toBeNull();
    expect(await f.people.sessions.signOutEverywhere(ann.personId, s.session.sessionId)).toBe(1);
    expect(await f.people.sessions.resolveSession(s.token)).not.toBeNull();
    await f.people.sessions.signOut(s.session.sessionId);
    expect(await f.people.sessions.resolveSession(s.token)).toBeNull();
  });

  test("last_seen moves forward at most once a minute while the session is used", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const first = (await f.people.sessions.listSessions(ann.personId))[0]!.lastSeenAt;
    f.clock.advance(30);
    await f.people.sessions.resolveSession(ann.session.token);
    expect((await f.people.sessions.listSessions(ann.personId))[0]!.lastSeenAt).toBe(first);
    f.clock.advance(31);
    await f.people.sessions.resolveSession(ann.session.token);
    expect((await f.people.sessions.listSessions(ann.personId))[0]!.lastSeenAt).toBe(first + 61);
  });
});

describe("passwords", () => {
  test("reset: a one-hour link sets a new password and signs the person out everywhere", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const reset = (await f.people.resets.requestPasswordReset(" Ann@example.com"))!;
    expect(reset.url).toMatch(/^http:\/\/gengate\.test\/console\/reset\/[A-Za-z0-9_-]{43}$/);
    expect(await f.people.resets.resetLinkValid(tokenOf(reset.url))).toBe(true);
    await f.people.resets.resetPassword(tokenOf(reset.url), "a brand new password");
    expect(await f.people.sessions.resolveSession(ann.session.token)).toBeNull();
    expect(await f.people.resets.resetLinkValid(tokenOf(reset.url))).toBe(false);
    await expect(
      f.people.signIn.signIn({ email: "ann@example.com", password: PASSWORD }, CLIENT),
    ).rejects.toMatchObject({
      code: "unauthorized",
    });
    const s = await f.people.signIn.signIn(
      { email: "ann@example.com", password: "a brand new password" },
      CLIENT,
    );
    expect(s.session.personId).toBe(ann.personId);
  });

  test("change: the current password is required; other sessions end, this one stays", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const here = await f.people.signIn.signIn({ email: "ann@example.com", password: PASSWORD }, CLIENT);
    await f.people.resets.changePassword(
      ann.personId,
      PASSWORD,
      "another good password",
      here.session.sessionId,
    );
    expect(await f.people.sessions.resolveSession(here.token)).not.toBeNull();
    expect(await f.people.sessions.resolveSession(ann.session.token)).toBeNull();
    await f.people.signIn.signIn({ email: "ann@example.com", password: "another good password" }, CLIENT);
  });
});

describe("two-factor", () => {
  test("set up, sign in with a code or a recovery code, turn off", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const { secret, otpauthUrl } = await f.people.twoFactor.beginTwoFactor(ann.personId);
    expect(otpauthUrl).toContain(`secret=${secret}`);
    const { recoveryCodes } = await f.people.twoFactor.enableTwoFactor(ann.personId, f.code(secret));
    expect(recoveryCodes).toHaveLength(10);
    for (const c of recoveryCodes) expect(c).toMatch(/^[A-Z2-7]{5}-[A-Z2-7]{5}$/);
    expect(new Set(recoveryCodes).size).toBe(10);
    expect((await f.people.sessions.resolveSession(ann.session.token))?.twoFactor).toBe(true);

    const missing = await f.people.signIn
      .signIn({ email: "ann@example.com", password: PASSWORD }, CLIENT)
      .catch((e) => e);
    expect(missing).toMatchObject({ code: "unauthorized", param: "code" });
    f.clock.advance(30); // the enabling code's step is used
    const s = await f.people.signIn.signIn(
      { email: "ann@example.com", password: PASSWORD, code: f.code(secret) },
      CLIENT,
    );
    expect(s.session.twoFactor).toBe(true);
    const r = await f.people.signIn.signIn(
      {
        email: "ann@example.com",
        password: PASSWORD,
        code: recoveryCodes[3]!.toLowerCase().replace("-", " "),
      },
      CLIENT,
    );
    expect(r.session.personId).toBe(ann.personId);

    await f.people.twoFactor.disableTwoFactor(ann.personId, PASSWORD);
    const plain = await f.people.signIn.signIn({ email: "ann@example.com", password: PASSWORD }, CLIENT);
    expect(plain.session.twoFactor).toBe(false);
  });
});

describe("members, keys and the alert threshold", () => {
  test("owners promote, demote and remove members; a member may leave", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const bob = await f.member(ann.accountId, "bob@example.com");
    const cy = await f.member(ann.accountId, "cy@example.com");
    const by = ann.session.session;
    await f.people.members.setRole(ann.accountId, bob.personId, "owner", by);
    await f.people.members.setRole(ann.accountId, ann.personId, "member", bob.session.session); // bob is an owner now
    expect((await f.people.members.listMembers(ann.accountId)).map((m) => `${m.email}:${m.role}`)).toEqual([
      "ann@example.com:member",
      "bob@example.com:owner",
      "cy@example.com:member",
    ]);
    await f.people.members.removeMember(ann.accountId, cy.personId, bob.session.session);
    await f.people.members.removeMember(ann.accountId, ann.personId, ann.session.session); // leaving
    expect((await f.people.members.listMembers(ann.accountId)).map((m) => m.email)).toEqual([
      "bob@example.com",
    ]);
    // Ann's session no longer points at that account.
    expect(await f.people.sessions.resolveSession(ann.session.token)).toMatchObject({
      accountId: null,
      role: null,
    });
  });

  test("keys remember their creator; the alert threshold is set, read and cleared", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const bob = await f.member(ann.accountId, "bob@example.com");
    const k = await f.accounts.createKey(ann.accountId, { name: "bob's", createdBy: bob.personId });
    expect(await f.accounts.isKeyCreatedBy(ann.accountId, k.keyId, bob.personId)).toBe(true);
    expect(await f.accounts.isKeyCreatedBy(ann.accountId, k.keyId, ann.personId)).toBe(false);
    const api = await f.accounts.createKey(ann.accountId, { name: "api" });
    expect(await f.accounts.isKeyCreatedBy(ann.accountId, api.keyId, bob.personId)).toBe(false);
    expect(await f.accounts.getAlertThreshold(ann.accountId)).toBeNull();
    await f.accounts.setAlertThreshold(ann.accountId, 5_000_000n);
    expect(await f.accounts.getAlertThreshold(ann.accountId)).toBe(5_000_000n);
    await f.accounts.setAlertThreshold(ann.accountId, null);
    expect(await f.accounts.getAlertThreshold(ann.accountId)).toBeNull();
  });
});
