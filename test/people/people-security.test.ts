import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { SIGNIN_FAILED } from "../../src/people/common.ts";
import {
  SESSION_ABSOLUTE_SECONDS,
  SESSION_IDLE_SECONDS,
  SIGNIN_WINDOW_SECONDS,
} from "../../src/people/types.ts";
import { CLIENT, domainError, PASSWORD, peopleFixture, tokenOf } from "./helpers.ts";

/** Every text and blob value of every table, as text (blobs as hex and base64 too). */
function everyStoredValue(db: Awaited<ReturnType<typeof peopleFixture>>["db"]): string {
  const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'").all();
  const out: string[] = [];
  for (const { name } of tables)
    for (const row of db.query(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[])
      for (const v of Object.values(row)) {
        if (typeof v === "string") out.push(v);
        else if (v instanceof Uint8Array)
          out.push(Buffer.from(v).toString("hex"), Buffer.from(v).toString("base64url"));
      }
  return out.join("\n");
}

describe("storage", () => {
  test("no password, session token, invite or reset token, or recovery code is stored in clear", async () => {
    const f = peopleFixture();
    const invite = await f.people.invites.createInvite({ email: "ann@example.com" });
    const ann = await f.people.signIn.acceptInvite(tokenOf(invite.url), PASSWORD, CLIENT);
    const signedIn = await f.people.signIn.signIn({ email: "ann@example.com", password: PASSWORD }, CLIENT);
    const reset = (await f.people.resets.requestPasswordReset("ann@example.com"))!;
    const { secret } = await f.people.twoFactor.beginTwoFactor(ann.session.session.personId);
    const { recoveryCodes } = await f.people.twoFactor.enableTwoFactor(
      ann.session.session.personId,
      f.code(secret),
    );
    const stored = everyStoredValue(f.db);
    const secrets = [
      PASSWORD,
      tokenOf(invite.url),
      ann.session.token,
      signedIn.token,
      tokenOf(reset.url),
      ...recoveryCodes,
      ...recoveryCodes.map((c) => c.replace("-", "")),
    ];
    for (const s of secrets) expect(stored).not.toContain(s);
    // What is stored is the SHA-256 of the token, and the password as an argon2id PHC string.
    const digest = createHash("sha256").update(signedIn.token).digest("hex");
    expect(stored).toContain(digest);
    const hash = f.db
      .query<{ password_hash: string }, []>("SELECT password_hash FROM people")
      .get()!.password_hash;
    expect(hash).toStartWith("$argon2id$");
  });

  test("a token that differs in one character does not resolve", async () => {
    const f = peopleFixture();
    const s = await f.person("ann@example.com");
    const t = s.session.token;
    const flipped = t.slice(0, -1) + (t.endsWith("A") ? "B" : "A");
    expect(await f.people.sessions.resolveSession(flipped)).toBeNull();
    expect(await f.people.sessions.resolveSession(t)).not.toBeNull();
  });
});

describe("no enumeration", () => {
  test("unknown email and wrong password give the same error, and both count toward throttling", async () => {
    const f = peopleFixture();
    await f.person("ann@example.com");
    const unknown = await domainError(() =>
      f.people.signIn.signIn({ email: "nobody@example.com", password: PASSWORD }, CLIENT),
    );
    const wrong = await domainError(() =>
      f.people.signIn.signIn({ email: "ann@example.com", password: "not the password" }, CLIENT),
    );
    for (const e of [unknown, wrong]) {
      expect(e.code).toBe("unauthorized");
      expect(e.message).toBe(SIGNIN_FAILED);
      expect(e.param).toBeUndefined();
    }
    const rows = f.db
      .query<{ subject: string }, []>("SELECT subject FROM signin_failures ORDER BY subject")
      .all();
    expect(rows.map((r) => r.subject).sort()).toEqual([
      "email:ann@example.com",
      "email:nobody@example.com",
      `ip:${CLIENT.ip}`,
      `ip:${CLIENT.ip}`,
    ]);
  });

  test("sign-up with an existing email and a wrong password fails exactly like a sign-in", async () => {
    const f = peopleFixture({ signup: "open" });
    await f.person("ann@example.com");
    const e = await domainError(() =>
      f.people.signIn.signUp({ email: "ann@example.com", password: "guess guess guess" }, CLIENT),
    );
    expect(e).toMatchObject({ code: "unauthorized", message: SIGNIN_FAILED });
    expect(e.param).toBeUndefined();
    expect(await f.accounts.countAccounts()).toBe(1);
  });

  test("a reset for an unknown email returns null and stores nothing", async () => {
    const f = peopleFixture();
    await f.person("ann@example.com");
    expect(await f.people.resets.requestPasswordReset("nobody@example.com")).toBeNull();
    expect(f.db.query("SELECT * FROM password_resets").all()).toEqual([]);
  });
});

describe("throttling", () => {
  test("10 failures for an email in 15 minutes: 429 with Retry-After, even with the right password, until the window frees", async () => {
    const f = peopleFixture();
    await f.person("ann@example.com");
    for (let i = 0; i < 10; i++) {
      const client = { ip: `198.51.100.${i}`, userAgent: null };
      expect(
        (
          await domainError(() =>
            f.people.signIn.signIn({ email: "ann@example.com", password: "wrong one!!" }, client),
          )
        ).code,
      ).toBe("unauthorized");
      f.clock.advance(10);
    }
    const limited = await domainError(() =>
      f.people.signIn.signIn({ email: "ann@example.com", password: PASSWORD }, CLIENT),
    );
    expect(limited.code).toBe("rate_limited");
    // The oldest failure was 100 s ago: the window frees in 800 s.
    expect(limited.retryAfterSeconds).toBe(SIGNIN_WINDOW_SECONDS - 100);
    f.clock.advance(SIGNIN_WINDOW_SECONDS - 100);
    const ok = await f.people.signIn.signIn({ email: "ann@example.com", password: PASSWORD }, CLIENT);
    expect(ok.session.email).toBe("ann@example.com");
  });

  test("10 failures from one address, whatever the emails: that address is limited, others are not", async () => {
    const f = peopleFixture();
    await f.person("ann@example.com");
    const attacker = { ip: "192.0.2.66", userAgent: null };
    for (let i = 0; i < 10; i++)
      await domainError(() =>
        f.people.signIn.signIn({ email: `guess${i}@example.com`, password: PASSWORD }, attacker),
      );
    const e = await domainError(() =>
      f.people.signIn.signIn({ email: "ann@example.com", password: PASSWORD }, attacker),
    );
    expect(e.code).toBe("rate_limited");
    expect(e.retryAfterSeconds).toBe(SIGNIN_WINDOW_SECONDS);
    const ok = await f.people.signIn.signIn({ email: "ann@example.com", password: PASSWORD }, CLIENT);
    expect(ok.session.email).toBe("ann@example.com");
  });

  test("an over-long email is stored as a short subject, and its failures still add up (issue 31)", async () => {
    // A 128 MiB "email" used to be written whole into signin_failures (515 MiB of data dir).
    const f = peopleFixture();
    const long = `${"a".repeat(1_000_000)}@example.com`;
    for (let i = 0; i < 10; i++)
      await domainError(() =>
        f.people.signIn.signIn({ email: long, password: "wrong one!!" }, { ip: null, userAgent: null }),
      );
    const longest = f.db
      .query<{ n: bigint }, []>("SELECT max(length(subject)) AS n FROM signin_failures")
      .get()!.n;
    expect(Number(longest)).toBeLessThanOrEqual(300);
    const e = await domainError(() =>
      f.people.signIn.signIn({ email: long, password: "wrong one!!" }, { ip: null, userAgent: null }),
    );
    expect(e.code).toBe("rate_limited");
  });

  test("an invite or a sign-up with the password of a person with two-factor still needs a code", async () => {
    const f = peopleFixture({ signup: "open" });
    const ann = await f.person("ann@example.com");
    const other = await f.person("bob@example.com");
    const { secret } = await f.people.twoFactor.beginTwoFactor(ann.personId);
    await f.people.twoFactor.enableTwoFactor(ann.personId, f.code(secret));
    const invite = await f.people.invites.createInvite({
      email: "ann@example.com",
      accountId: other.accountId,
    });
    const token = tokenOf(invite.url);
    expect(await domainError(() => f.people.signIn.acceptInvite(token, PASSWORD, CLIENT))).toMatchObject({
      code: "unauthorized",
      param: "code",
    });
    expect(
      await domainError(() =>
        f.people.signIn.signUp({ email: "ann@example.com", password: PASSWORD }, CLIENT),
      ),
    ).toMatchObject({ code: "unauthorized", param: "code" });
    expect(await f.people.members.accountsOf(ann.personId)).toHaveLength(1);
    f.clock.advance(30);
    const joined = await f.people.signIn.acceptInvite(token, PASSWORD, CLIENT, null, f.code(secret));
    expect(joined.session.session).toMatchObject({ personId: ann.personId, accountId: other.accountId });
  });

  test("wrong second-factor codes count as failures too", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const { secret } = await f.people.twoFactor.beginTwoFactor(ann.personId);
    await f.people.twoFactor.enableTwoFactor(ann.personId, f.code(secret));
    for (let i = 0; i < 10; i++) {
      const e = await domainError(() =>
        f.people.signIn.signIn(
          { email: "ann@example.com", password: PASSWORD, code: "000000" },
          { ip: null, userAgent: null },
        ),
      );
      expect(e).toMatchObject({ code: "unauthorized", param: "code" });
    }
    f.clock.advance(60);
    const e = await domainError(() =>
      f.people.signIn.signIn({ email: "ann@example.com", password: PASSWORD, code: f.code(secret) }, CLIENT),
    );
    expect(e.code).toBe("rate_limited");
  });
});

describe("one-time secrets", () => {
  test("an invite accepted twice at once: exactly one wins", async () => {
    const f = peopleFixture();
    const invite = await f.people.invites.createInvite({});
    const token = tokenOf(invite.url);
    const results = await Promise.allSettled([
      f.people.signIn.acceptInvite(token, PASSWORD, CLIENT, "one@example.com"),
      f.people.signIn.acceptInvite(token, PASSWORD, CLIENT, "two@example.com"),
      f.people.signIn.signUp({ email: "three@example.com", password: PASSWORD, invite: token }, CLIENT),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results)
      if (r.status === "rejected") expect(r.reason).toMatchObject({ code: "not_found" });
    expect(await f.people.members.listPeople()).toHaveLength(1);
    expect(await f.accounts.countAccounts()).toBe(1);
  });

  test("a reset link used twice at once: one password wins, the other call is 404", async () => {
    const f = peopleFixture();
    await f.person("ann@example.com");
    const token = tokenOf((await f.people.resets.requestPasswordReset("ann@example.com"))!.url);
    const results = await Promise.allSettled([
      f.people.resets.resetPassword(token, "first new password"),
      f.people.resets.resetPassword(token, "second new password"),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    const winner = results[0]!.status === "fulfilled" ? "first new password" : "second new password";
    await f.people.signIn.signIn({ email: "ann@example.com", password: winner }, CLIENT);
  });

  test("a recovery code and a TOTP code work once each", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const { secret } = await f.people.twoFactor.beginTwoFactor(ann.personId);
    const { recoveryCodes } = await f.people.twoFactor.enableTwoFactor(ann.personId, f.code(secret));
    const recovery = recoveryCodes[0]!;
    await f.people.signIn.signIn({ email: "ann@example.com", password: PASSWORD, code: recovery }, CLIENT);
    expect(
      await domainError(() =>
        f.people.signIn.signIn({ email: "ann@example.com", password: PASSWORD, code: recovery }, CLIENT),
      ),
    ).toMatchObject({ code: "unauthorized", param: "code" });
    // The code that enabled two-factor is used; so is the next one once accepted.
    expect(
      await domainError(() =>
        f.people.signIn.signIn(
          { email: "ann@example.com", password: PASSWORD, code: f.code(secret) },
          CLIENT,
        ),
      ),
    ).toMatchObject({ param: "code" });
    f.clock.advance(30);
    const code = f.code(secret);
    await f.people.signIn.signIn({ email: "ann@example.com", password: PASSWORD, code }, CLIENT);
    expect(
      await domainError(() =>
        f.people.signIn.signIn({ email: "ann@example.com", password: PASSWORD, code }, CLIENT),
      ),
    ).toMatchObject({ param: "code" });
  });

  test("expired links: an invite after 7 days, a reset after 1 hour", async () => {
    const f = peopleFixture();
    await f.person("ann@example.com");
    const invite = await f.people.invites.createInvite({ email: "late@example.com" });
    const reset = (await f.people.resets.requestPasswordReset("ann@example.com"))!;
    f.clock.advance(3600);
    expect(await f.people.resets.resetLinkValid(tokenOf(reset.url))).toBe(false);
    expect(
      await domainError(() => f.people.resets.resetPassword(tokenOf(reset.url), "new password 123")),
    ).toMatchObject({
      code: "not_found",
    });
    expect(await f.people.invites.inviteInfo(tokenOf(invite.url))).not.toBeNull();
    f.clock.advance(7 * 24 * 3600 - 3600);
    expect(await f.people.invites.inviteInfo(tokenOf(invite.url))).toBeNull();
    expect(
      await domainError(() => f.people.signIn.acceptInvite(tokenOf(invite.url), PASSWORD, CLIENT)),
    ).toMatchObject({
      code: "not_found",
    });
    expect((await f.people.invites.listInvites()).find((i) => i.email === "late@example.com")?.state).toBe(
      "expired",
    );
  });
});

describe("sessions", () => {
  test("idle for 12 hours: gone", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    f.clock.advance(SESSION_IDLE_SECONDS - 1);
    expect(await f.people.sessions.resolveSession(ann.session.token)).not.toBeNull();
    f.clock.advance(SESSION_IDLE_SECONDS);
    expect(await f.people.sessions.resolveSession(ann.session.token)).toBeNull();
  });

  test("used every 11 hours, a session still ends after 30 days", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    let elapsed = 0;
    while (elapsed + 11 * 3600 < SESSION_ABSOLUTE_SECONDS) {
      f.clock.advance(11 * 3600);
      elapsed += 11 * 3600;
      expect(await f.people.sessions.resolveSession(ann.session.token)).not.toBeNull();
    }
    f.clock.advance(SESSION_ABSOLUTE_SECONDS - elapsed);
    expect(await f.people.sessions.resolveSession(ann.session.token)).toBeNull();
  });

  test("revoked sessions resolve to null: sign-out, sign-out everywhere, reset", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const a = await f.people.signIn.signIn({ email: "ann@example.com", password: PASSWORD }, CLIENT);
    const b = await f.people.signIn.signIn({ email: "ann@example.com", password: PASSWORD }, CLIENT);
    await f.people.sessions.signOut(a.session.sessionId);
    expect(await f.people.sessions.resolveSession(a.token)).toBeNull();
    expect(await f.people.sessions.signOutEverywhere(ann.personId)).toBe(2);
    expect(await f.people.sessions.resolveSession(b.token)).toBeNull();
    expect(await f.people.sessions.resolveSession(ann.session.token)).toBeNull();
  });
});

describe("accounts a person belongs to", () => {
  test("switching to an account the person is not a member of is 404 and changes nothing", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const bob = await f.person("bob@example.com");
    const e = await domainError(
      async () =>
        await f.people.sessions.switchAccount(ann.session.session.sessionId, ann.personId, bob.accountId),
    );
    expect(e.code).toBe("not_found");
    // Nor can a person move someone else's session.
    expect(
      await domainError(
        async () =>
          await f.people.sessions.switchAccount(bob.session.session.sessionId, ann.personId, ann.accountId),
      ),
    ).toMatchObject({ code: "not_found" });
    expect((await f.people.sessions.resolveSession(ann.session.token))?.accountId).toBe(ann.accountId);
    expect((await f.people.members.accountsOf(ann.personId)).map((a) => a.accountId)).toEqual([
      ann.accountId,
    ]);
  });

  test("two owners demoting each other: the account keeps one owner (the update itself checks)", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    const bob = await f.member(ann.accountId, "bob@example.com", "owner");
    // The store's conditional updates, as two requests that both passed their role check would run them.
    expect(await f.people.store.setRole(ann.accountId, bob.personId, "member")).toBe(true);
    expect(await f.people.store.setRole(ann.accountId, ann.personId, "member")).toBe(false);
    expect(await f.people.store.removeMembership(ann.accountId, ann.personId)).toBe(false);
    expect(
      (await f.people.members.listMembers(ann.accountId))
        .filter((m) => m.role === "owner")
        .map((m) => m.email),
    ).toEqual(["ann@example.com"]);
    // Through the service: bob, now a member, may not demote ann.
    expect(
      await domainError(
        async () =>
          await f.people.members.setRole(ann.accountId, ann.personId, "member", bob.session.session),
      ),
    ).toMatchObject({
      code: "forbidden",
    });
  });

  test("the last owner cannot be removed, by themselves either", async () => {
    const f = peopleFixture();
    const ann = await f.person("ann@example.com");
    expect(
      await domainError(
        async () => await f.people.members.removeMember(ann.accountId, ann.personId, ann.session.session),
      ),
    ).toMatchObject({
      code: "conflict",
    });
    expect(await f.people.store.countOwners(ann.accountId)).toBe(1);
  });
});
