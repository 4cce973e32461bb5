import { afterAll, describe, expect, test } from "bun:test";
import { createServices } from "../../src/app/services.ts";
import { onPostgres, sqliteOnly } from "../helpers/backend.ts";
import { openServerSql, runGengate, startServer, type TestServer } from "../helpers/server.ts";

const servers: TestServer[] = [];
afterAll(() => {
  for (const s of servers) s.cleanup();
});
const CLIENT = { ip: null, userAgent: null };
const tokenOf = (url: string) => url.slice(url.lastIndexOf("/") + 1);

/** The people service over the server's database (either backend), as a second process would use it. */
async function peopleOf(dataDir: string) {
  const db = await openServerSql(dataDir, { write: true });
  return {
    db,
    people: createServices(db.sql, "http://unused.test", undefined, {
      passwordCost: { memoryCost: 1024, timeCost: 1 },
    }).people,
  };
}

describe("gengate user", () => {
  test("the first start prints a one-time console invite for the default account; later starts do not", async () => {
    const s = await startServer();
    servers.push(s);
    expect(s.ownerInvite).toMatch(new RegExp(`^${s.url}/console/invite/[A-Za-z0-9_-]{43}$`));
    expect(s.output()).toContain("Console sign-up link");
    const { db, people } = await peopleOf(s.dataDir);
    const info = await people.invites.inviteInfo(tokenOf(s.ownerInvite!));
    expect(info).toEqual({ email: null, accountName: "default", role: "owner", personExists: false });
    await db.close();
    expect(await s.stop()).toBe(0);
    const again = await startServer({ dataDir: s.dataDir });
    servers.push(again);
    expect(again.ownerInvite).toBeNull();
    expect(again.output()).not.toContain("/console/invite/");
    await again.stop();
  });

  test.skipIf(onPostgres)(
    sqliteOnly(
      "without a configured public URL, links use the address the server really started at (not :8080)",
      "the data dir records the started address on SQLite only; on PostgreSQL the CLI takes --public-url",
    ),
    async () => {
      const s = await startServer();
      servers.push(s);
      expect(new URL(s.url).port).not.toBe("8080");
      const invite = await runGengate([
        "user",
        "invite",
        "--email",
        "port@example.com",
        "--json",
        "--data-dir",
        s.dataDir,
      ]);
      expect(invite.code).toBe(0);
      const { url } = JSON.parse(invite.stdout) as { url: string };
      expect(url.startsWith(`${s.url}/console/invite/`)).toBe(true);
      // The link opens the invite page of that running server.
      expect((await fetch(url)).status).toBe(200);
    },
  );

  test("invite and reset-password print one-time links while the server runs; --json prints {url}", async () => {
    const s = await startServer();
    servers.push(s);
    const dd = ["--data-dir", s.dataDir];
    const invite = await runGengate(["user", "invite", "--email", "Ann@Example.com", "--json", ...dd], {
      GENGATE_PUBLIC_URL: "https://gen.example.com/",
    });
    expect(invite.code).toBe(0);
    const { url } = JSON.parse(invite.stdout) as { url: string };
    expect(Object.keys(JSON.parse(invite.stdout))).toEqual(["url"]);
    expect(url).toMatch(/^https:\/\/gen\.example\.com\/console\/invite\/[A-Za-z0-9_-]{43}$/);

    const { db, people } = await peopleOf(s.dataDir);
    const accepted = await people.signIn.acceptInvite(tokenOf(url), "a good password", CLIENT);
    expect(accepted.key).toMatch(/^gk_/);
    // The new account's Default key works against the running server at once.
    expect((await s.fetch("/v1/account", { key: accepted.key })).status).toBe(200);

    const human = await runGengate([
      "user",
      "invite",
      "--email",
      "bob@example.com",
      "--account",
      accepted.session.session.accountId!,
      "--role",
      "member",
      "--public-url",
      "https://other.example.com",
      ...dd,
    ]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("bob@example.com");
    expect(human.stdout).toMatch(/https:\/\/other\.example\.com\/console\/invite\/[A-Za-z0-9_-]{43}\n$/);

    const reset = await runGengate(["user", "reset-password", "--email", "ann@example.com", "--json", ...dd]);
    expect(reset.code).toBe(0);
    const resetUrl = (JSON.parse(reset.stdout) as { url: string }).url;
    // No public_url configured: the server's own address, as `gengate serve` would print it.
    expect(resetUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/console\/reset\/[A-Za-z0-9_-]{43}$/);
    await people.resets.resetPassword(tokenOf(resetUrl), "a new good password");
    await people.signIn.signIn({ email: "ann@example.com", password: "a new good password" }, CLIENT);
    await db.close();
    await s.stop();
  });

  test("errors: unknown email for a reset (exit 1), bad role or missing email (exit 2), unknown account (exit 1)", async () => {
    const s = await startServer();
    servers.push(s);
    const dd = ["--data-dir", s.dataDir];
    const unknown = await runGengate(["user", "reset-password", "--email", "nobody@example.com", ...dd]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim().split("\n")).toEqual(["gengate: no person with email nobody@example.com"]);
    expect(unknown.stdout).toBe("");
    const role = await runGengate([
      "user",
      "invite",
      "--email",
      "a@example.com",
      "--account",
      "acct_x",
      "--role",
      "boss",
      ...dd,
    ]);
    expect(role.code).toBe(2);
    expect((await runGengate(["user", "invite", ...dd])).code).toBe(2);
    expect((await runGengate(["user", "frobnicate", ...dd])).code).toBe(2);
    expect(
      (await runGengate(["user", "reset-password", "--email", "a@example.com", "--operator", ...dd])).code,
    ).toBe(2);
    const account = await runGengate([
      "user",
      "invite",
      "--email",
      "a@example.com",
      "--account",
      "acct_nope12345678",
      ...dd,
    ]);
    expect(account.code).toBe(1);
    expect(account.stderr).toContain("No account acct_nope12345678");
    await s.stop();
  });
});
