// The console end to end in Chromium (issue 15, "Proof"): invite -> set password -> signed in -> create
// a key on the Keys page (read from `New key`) -> call the API with it -> its spend shows on Overview and
// Usage -> revoke -> the API refuses the key on the very next request -> sign-out ends the session.
// Every page visited is checked: no request to another origin, no console error or CSP violation, no
// serious or critical axe violation (browser-e2e.ts, checkPage).
import { expect, test } from "bun:test";
import { describeBrowser, inviteAndSignIn } from "../helpers/browser.ts";
import {
  apiAccount,
  browserSession,
  checkPage,
  createKey,
  credit,
  keyRow,
  mainText,
  replay,
  revokeKey,
  runImage,
  sessionCookie,
  showsAmount,
  visit,
} from "./browser-e2e.ts";

describeBrowser("the console end to end", () => {
  const session = browserSession();

  test("invite, key, spend on Overview and Usage, revoke, sign out", async () => {
    const { server, g } = session;
    // Invite -> `Password` + `Set password` -> signed in, the Default key shown once.
    const person = await inviteAndSignIn(g, server);
    await checkPage(g, "after accepting the invite");
    expect(person.key).toMatch(/^gk_/);
    const defaultAccount = await apiAccount(server, person.key!);
    expect(defaultAccount.status).toBe(200);
    const { id: accountId, currency } = defaultAccount.account!;
    await credit(server, accountId, "7.5");

    // Keys: `Name`, `Monthly limit`, `Create key` -> the read-only `New key`.
    const name = `flow key ${Date.now()}`;
    const key = await createKey(g, name, "5");
    expect(key).toMatch(/^gk_/);
    expect(key).not.toBe(person.key);
    await visit(g, "/console/keys");
    expect(await keyRow(g.page, name).count()).toBe(1);
    // Shown once: the keys page no longer holds the key anywhere.
    expect(await g.page.content()).not.toContain(key);

    // The same account, nothing spent yet.
    const before = await apiAccount(server, key);
    expect(before.account?.id).toBe(accountId);
    expect(before.account?.month_spent_micro).toBe("0");

    // Call the API with the new key: three sandbox images.
    const run = await runImage(server, key, 3);
    expect(run.status).toBe(200);
    const after = await apiAccount(server, key);
    const spent = BigInt(after.account!.month_spent_micro);
    expect(spent).toBeGreaterThan(0n);

    // The spend shows on Overview (month's spend, the key's spend, by model) and on Usage.
    await g.page.getByRole("link", { name: "Overview", exact: true }).click();
    await g.settle();
    expect(new URL(g.page.url()).pathname).toBe("/console");
    await checkPage(g, "overview");
    expect(await showsAmount(g.page, spent, currency)).toBe(true);
    expect((await mainText(g.page)).includes(name)).toBe(true);
    expect(await mainText(g.page)).toContain("sandbox/image");

    await g.page.getByRole("link", { name: "Usage", exact: true }).click();
    await g.settle();
    expect(new URL(g.page.url()).pathname).toBe("/console/usage");
    await checkPage(g, "usage");
    expect(await showsAmount(g.page, spent, currency)).toBe(true);
    expect(await mainText(g.page)).toContain("sandbox/image");

    // Revoke (`Revoke` in its row, then `Revoke key`): refused by the API on the next request, even
    // though it was used a moment ago (the principal cache must not keep it alive).
    await revokeKey(g, name, {
      before: async () => expect((await apiAccount(server, key)).status).toBe(200),
      after: async () => expect((await apiAccount(server, key)).status).toBe(401),
    });
    expect((await runImage(server, key)).status).toBe(401);
    // The Default key is untouched.
    expect((await apiAccount(server, person.key!)).status).toBe(200);

    // Sign out: the session ends on the server, not only in this browser.
    const cookie = await sessionCookie(g);
    expect(cookie).not.toBeNull();
    expect((await replay(server, "/console", cookie!)).status).toBe(200);
    await g.page.getByRole("button", { name: "Sign out", exact: true }).click();
    await g.page.waitForURL(/\/console\/login/);
    await g.settle();
    await checkPage(g, "sign-in after signing out");
    await g.goto("/console");
    expect(new URL(g.page.url()).pathname).toBe("/console/login");
    await g.page.getByRole("button", { name: "Sign in", exact: true }).waitFor();
    await checkPage(g, "sign-in when signed out");
    const replayed = await replay(server, "/console", cookie!);
    expect(replayed.status).toBe(303);
    expect(replayed.location).toStartWith("/console/login");
    g.assertClean();
  }, 180_000); // a dozen page loads, each with an axe run, on a shared 2-core machine
});
