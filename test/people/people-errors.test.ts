import { describe, expect, test } from "bun:test";
import { PASSWORD_MAX_LENGTH } from "../../src/people/passwords.ts";
import { CLIENT, domainError, PASSWORD, peopleFixture, tokenOf } from "./helpers.ts";

describe("input", () => {
  test("passwords under 10 or over 1024 characters and malformed emails are validation errors", async () => {
    const f = peopleFixture({ signup: "open" });
    for (const password of ["short", "123456789", "x".repeat(PASSWORD_MAX_LENGTH + 1)]) {
      const e = await domainError(() => f.people.signIn.signUp({ email: "a@example.com", password }, CLIENT));
      expect(e).toMatchObject({ code: "validation_error", param: "password" });
    }
    for (const email of ["", "no-at-sign", "a@b", "a b@example.com", `${"x".repeat(250)}@example.com`]) {
      const e = await domainError(() => f.people.signIn.signUp({ email, password: PASSWORD }, CLIENT));
      expect(e).toMatchObject({ code: "validation_error", param: "email" });
    }
    const invite = await f.people.invites.createInvite({ email: "b@example.com" });
    const e = await domainError(() => f.people.signIn.acceptInvite(tokenOf(invite.url), "too short", CLIENT));
    expect(e).toMatchObject({ code: "validation_error", param: "password" });
    expect(await f.people.invites.inviteInfo(tokenOf(invite.url))).not.toBeNull(); // a refused attempt does not use it
    expect(await f.people.members.listPeople()).toEqual([]);
  });

  test("an email-less invite needs an email; a sign-up invite is for its own email only", async () => {
    const f = peopleFixture();
    const noEmail = await f.people.invites.createInvite({});
    expect(
      await domainError(() => f.people.signIn.acceptInvite(tokenOf(noEmail.url), PASSWORD, CLIENT)),
    ).toMatchObject({
      code: "validation_error",
      param: "email",
    });
    const forAnn = await f.people.invites.createInvite({ email: "ann@example.com" });
    expect(
      await domainError(() =>
        f.people.signIn.signUp(
          { email: "eve@example.com", password: PASSWORD, invite: tokenOf(forAnn.url) },
          CLIENT,
        ),
      ),
    ).toMatchObject({ code: "validation_error", param: "email" });
  });

  test("createInvite: unknown account 404, bad role, owners only for their account, operators only by operators", async () => {
    const f = peopleFixture();
    expect(
      await domainError(async () => await f.people.invites.createInvite({ accountId: "acct_nope12345678" })),
    ).toMatchObject({
      code: "not_found",
    });
    expect(
      await domainError(
        async () => await f.people.invites.createInvite({ email: "a@example.com", role: "admin" as never }),
      ),
    ).toMatchObject({ code: "validation_error", param: "role" });
    const ann = await f.person("ann@example.com");
    const bob = await f.member(ann.accountId, "bob@example.com");
    const other = await f.person("cy@example.com");
    const cases = [
      { email: "x@example.com", accountId: ann.accountId, createdBy: bob.personId }, // a member
      { email: "x@example.com", accountId: other.accountId, createdBy: ann.personId }, // not her account
      { email: "x@example.com", createdBy: ann.personId }, // a new account: operators only
      { email: "x@example.com", accountId: ann.accountId, operator: true, createdBy: ann.personId },
    ];
    for (const c of cases)
      expect(await domainError(async () => await f.people.invites.createInvite(c))).toMatchObject({
        code: "forbidden",
      });
  });
});

describe("sign-up modes", () => {
  test("invite mode without an invite is forbidden; closed mode takes only operator-made invites", async () => {
    const f = peopleFixture({ signup: "invite" });
    expect(
      await domainError(() => f.people.signIn.signUp({ email: "a@example.com", password: PASSWORD }, CLIENT)),
    ).toMatchObject({ code: "forbidden", param: "invite" });
    const ann = await f.person("ann@example.com");
    const ownerMade = await f.people.invites.createInvite({
      email: "m@example.com",
      accountId: ann.accountId,
      createdBy: ann.personId,
    });
    f.consoleSettings.signup = "closed";
    expect(await f.people.invites.inviteInfo(tokenOf(ownerMade.url))).toBeNull();
    expect(
      await domainError(() => f.people.signIn.acceptInvite(tokenOf(ownerMade.url), PASSWORD, CLIENT)),
    ).toMatchObject({
      code: "not_found",
    });
    expect(
      await domainError(() => f.people.signIn.signUp({ email: "a@example.com", password: PASSWORD }, CLIENT)),
    ).toMatchObject({ code: "forbidden" });
    const operatorMade = await f.people.invites.createInvite({
      email: "m@example.com",
      accountId: ann.accountId,
    });
    const r = await f.people.signIn.acceptInvite(tokenOf(operatorMade.url), PASSWORD, CLIENT);
    expect(r.session.session.role).toBe("member");
  });

  test("signUp refuses an invite that joins an existing account (its link is the way)", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const join = await f.people.invites.createInvite({ email: "m@example.com", accountId: ann.accountId });
    expect(
      await domainError(() =>
        f.people.signIn.signUp(
          { email: "m@example.com", password: PASSWORD, invite: tokenOf(join.url) },
          CLIENT,
        ),
      ),
    ).toMatchObject({ code: "validation_error", param: "invite" });
  });
});

describe("tokens and links", () => {
  test("unknown, revoked and used invite or reset tokens are 404; revoking a used invite is 404", async () => {
    const f = peopleFixture();
    for (const t of ["", "short", "x".repeat(43), "y".repeat(500)]) {
      expect(await f.people.invites.inviteInfo(t)).toBeNull();
      expect(
        await domainError(() => f.people.signIn.acceptInvite(t, PASSWORD, CLIENT, "a@example.com")),
      ).toMatchObject({
        code: "not_found",
      });
      expect(await domainError(() => f.people.resets.resetPassword(t, PASSWORD))).toMatchObject({
        code: "not_found",
      });
      expect(await f.people.sessions.resolveSession(t)).toBeNull();
    }
    const used = await f.people.invites.createInvite({ email: "a@example.com" });
    await f.people.signIn.acceptInvite(tokenOf(used.url), PASSWORD, CLIENT);
    expect(await domainError(async () => await f.people.invites.revokeInvite(used.id))).toMatchObject({
      code: "not_found",
    });
    expect(
      await domainError(async () => await f.people.invites.revokeInvite("inv_unknown123456")),
    ).toMatchObject({
      code: "not_found",
    });
  });
});

describe("members and sessions", () => {
  test("members cannot manage members; unknown members are 404; the last owner stays", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const bob = await f.member(ann.accountId, "bob@example.com");
    const owner = ann.session.session;
    expect(
      await domainError(
        async () => await f.people.members.setRole(ann.accountId, bob.personId, "owner", bob.session.session),
      ),
    ).toMatchObject({
      code: "forbidden",
    });
    expect(
      await domainError(
        async () => await f.people.members.removeMember(ann.accountId, ann.personId, bob.session.session),
      ),
    ).toMatchObject({
      code: "forbidden",
    });
    expect(
      await domainError(
        async () => await f.people.members.removeMember(ann.accountId, "person_nobody1234", owner),
      ),
    ).toMatchObject({
      code: "not_found",
    });
    expect(
      await domainError(async () => await f.people.members.removeMember(ann.accountId, ann.personId, owner)),
    ).toMatchObject({
      code: "conflict",
    });
    expect(
      await domainError(
        async () => await f.people.members.setRole(ann.accountId, ann.personId, "member", owner),
      ),
    ).toMatchObject({
      code: "conflict",
    });
    expect(
      await domainError(
        async () => await f.people.members.setRole(ann.accountId, bob.personId, "boss" as never, owner),
      ),
    ).toMatchObject({
      code: "validation_error",
    });
    expect((await f.people.members.listMembers(ann.accountId)).map((m) => m.role)).toEqual([
      "owner",
      "member",
    ]);
  });

  test("another person's session cannot be revoked (404) and stays live", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const bob = await f.person("bob@example.com");
    expect(
      await domainError(
        async () => await f.people.sessions.revokeSession(bob.personId, ann.session.session.sessionId),
      ),
    ).toMatchObject({
      code: "not_found",
    });
    expect(await f.people.sessions.resolveSession(ann.session.token)).not.toBeNull();
  });
});

describe("passwords and two-factor", () => {
  test("changePassword with a wrong current password or a short new one changes nothing", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const keep = ann.session.session.sessionId;
    expect(
      await domainError(() =>
        f.people.resets.changePassword(ann.personId, "wrong password", "new password 1", keep),
      ),
    ).toMatchObject({
      code: "unauthorized",
      param: "current_password",
    });
    expect(
      await domainError(() => f.people.resets.changePassword(ann.personId, PASSWORD, "short", keep)),
    ).toMatchObject({
      code: "validation_error",
      param: "new_password",
    });
    await f.people.signIn.signIn({ email: "ann@example.com", password: PASSWORD }, CLIENT);
  });

  test("two-factor: a wrong code does not enable it; enabling twice or without set-up conflicts; off needs the password", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    expect(
      await domainError(async () => await f.people.twoFactor.enableTwoFactor(ann.personId, "123456")),
    ).toMatchObject({
      code: "conflict",
    });
    const { secret } = await f.people.twoFactor.beginTwoFactor(ann.personId);
    const wrong = f.code(secret, 5);
    expect(
      await domainError(async () => await f.people.twoFactor.enableTwoFactor(ann.personId, wrong)),
    ).toMatchObject({
      code: "validation_error",
      param: "code",
    });
    expect((await f.people.sessions.resolveSession(ann.session.token))?.twoFactor).toBe(false);
    await f.people.twoFactor.enableTwoFactor(ann.personId, f.code(secret));
    expect(
      await domainError(async () => await f.people.twoFactor.beginTwoFactor(ann.personId)),
    ).toMatchObject({
      code: "conflict",
    });
    expect(
      await domainError(async () => await f.people.twoFactor.enableTwoFactor(ann.personId, f.code(secret))),
    ).toMatchObject({
      code: "conflict",
    });
    expect(
      await domainError(() => f.people.twoFactor.disableTwoFactor(ann.personId, "wrong password")),
    ).toMatchObject({
      code: "unauthorized",
    });
    expect((await f.people.sessions.resolveSession(ann.session.token))?.twoFactor).toBe(true);
  });
});
