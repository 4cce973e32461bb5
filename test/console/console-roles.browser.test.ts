// Roles and accounts in Chromium (issue 15, "Proof" and "Security"): a member of account A cannot reach
// the owner-only pages and actions (members on Settings, revoking a key another person created,
// the operator pages), and a person of account B never sees A's keys or requests: A's request is a
// 404 page for B, and a forged revoke of A's key changes nothing. Every page visited is checked (no
// request to another origin, no console error, no serious or critical axe violation).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import {
  type ConsolePerson,
  describeBrowser,
  type GuardedPage,
  inviteAndSignIn,
  launchBrowser,
  openGuardedPage,
} from "../helpers/browser.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import {
  apiAccount,
  checkPage,
  createKey,
  credit,
  keyRow,
  mainText,
  runImage,
  sessionCookie,
  visit,
} from "./browser-e2e.ts";

/**
 * A form post with the page's session, as the page itself would send it (the session cookie, the
 * session's CSRF token from <meta name="csrf-token">, the console's Origin): what a person who edits
 * the page's markup can send. Sent from the test, not the page, so the refusal is not a console error
 * of the guarded page. Returns the status (redirects not followed).
 */
async function postAs(g: GuardedPage, action: string, fields: Record<string, string>): Promise<number> {
  const cookie = await sessionCookie(g);
  const csrf = await g.page.locator('meta[name="csrf-token"]').getAttribute("content");
  expect(cookie && csrf).toBeTruthy();
  const res = await fetch(new URL(action, g.origin).href, {
    method: "POST",
    redirect: "manual",
    headers: {
      cookie: `gengate_session=${cookie}`,
      origin: g.origin,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ ...fields, csrf: csrf! }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** The revoke form of the key named `name` on the Keys page: its action and fields (CSRF excluded). */
async function revokeForm(
  g: GuardedPage,
  name: string,
): Promise<{ action: string; fields: Record<string, string> }> {
  await visit(g, "/console/keys");
  const row = keyRow(g.page, name);
  await row.getByRole("button", { name: "Revoke", exact: true }).click();
  const confirm = g.page.getByRole("button", { name: "Revoke key", exact: true });
  await confirm.waitFor();
  // What clicking it would send: the fields of its form, the button's own name/value, minus the token.
  return await confirm.evaluate((button) => {
    interface Control {
      name: string;
      value: string;
      type: string;
      disabled: boolean;
    }
    const b = button as unknown as Control & {
      form: { getAttribute(n: string): string | null; elements: ArrayLike<Control> };
    };
    const fields: Record<string, string> = {};
    for (const el of Array.from(b.form.elements)) {
      if (!el.name || el.name === "csrf" || el.disabled) continue;
      if ((el.type === "submit" || el.type === "button") && el !== b) continue;
      fields[el.name] = el.value;
    }
    return { action: b.form.getAttribute("action") ?? "", fields };
  });
}

/** The key's own pages the owner's Keys page links to from its row (change limit, revoke without JS...). */
async function keyPages(g: GuardedPage, name: string): Promise<string[]> {
  await visit(g, "/console/keys");
  const hrefs = await keyRow(g.page, name)
    .locator('a[href^="/console/keys/"]')
    .evaluateAll((links) =>
      links.map((a) => (a as unknown as { getAttribute(n: string): string }).getAttribute("href")),
    );
  return [...new Set(hrefs)];
}

describeBrowser("roles and accounts in the console", () => {
  let server: TestServer;
  let browser: Browser;
  const pages: GuardedPage[] = [];
  // Account A: an owner and a member. Account B: another owner.
  let owner: GuardedPage;
  let member: GuardedPage;
  let other: GuardedPage;
  let ownerPerson: ConsolePerson;
  let accountA: string;
  let requestA: string;
  const ownerKeyName = `owner key ${Date.now()}`;
  let ownerKey: string;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
    for (let i = 0; i < 3; i++) pages.push(await openGuardedPage(browser, server.url));
    [owner, member, other] = pages as [GuardedPage, GuardedPage, GuardedPage];
    ownerPerson = await inviteAndSignIn(owner, server);
    accountA = (await apiAccount(server, ownerPerson.key!)).account!.id;
    await credit(server, accountA, "3");
    ownerKey = await createKey(owner, ownerKeyName, "2");
    const run = await runImage(server, ownerKey);
    expect(run.status).toBe(200);
    requestA = run.requestId!;
    await inviteAndSignIn(member, server, { account: accountA, role: "member" });
    await inviteAndSignIn(other, server);
  }, 180_000); // three people invited through the CLI, a key, a job

  afterAll(async () => {
    for (const g of pages) await g.close();
    await browser?.close();
    server?.cleanup();
  });

  describe("a member", () => {
    test("sees the account's requests and usage, like the owner", async () => {
      await visit(member, "/console/requests");
      expect(await mainText(member.page)).toContain("sandbox/image");
      await visit(member, `/console/requests/${requestA}`);
      await visit(member, "/console/usage");
      await visit(member, "/console/wallet");
    }, 120_000);

    test("manages the keys they created, but cannot revoke the owner's: no button, a forged post refused", async () => {
      // Their own key: created on the Keys page, with its own Revoke; the same post as the forged one
      // below revokes it (so the refusal below is the server's rule, not a broken request).
      const name = `member key ${Date.now()}`;
      const key = await createKey(member, name, "1");
      expect((await apiAccount(server, key)).account?.id).toBe(accountA);
      const own = await revokeForm(member, name);
      await visit(member, "/console/keys");
      expect(await postAs(member, own.action, own.fields)).toBe(303);
      expect((await apiAccount(server, key)).status).toBe(401);

      const form = await revokeForm(owner, ownerKeyName);
      await visit(member, "/console/keys");
      const row = keyRow(member.page, ownerKeyName);
      expect(await row.count()).toBe(1); // a member sees the account's keys...
      expect(await row.getByRole("button", { name: "Revoke", exact: true }).count()).toBe(0); // ...not their controls
      const status = await postAs(member, form.action, form.fields);
      expect([403, 404]).toContain(status);
      // The owner's key's own pages (the row's links) are refused too.
      for (const path of await keyPages(owner, ownerKeyName)) {
        const res = await member.page.goto(new URL(path, server.url).href);
        await member.settle();
        expect(`${path}: ${[403, 404].includes(res?.status() ?? 0)}`).toBe(`${path}: true`);
        await checkPage(member, path);
      }
      expect((await apiAccount(server, ownerKey)).status).toBe(200);
      member.assertClean();
    }, 120_000);

    test("does not get the owner's member controls on Settings", async () => {
      await visit(owner, "/console/settings");
      const ownerButtons = await owner.page.getByRole("button", { name: /invite|remove/i }).count();
      expect(ownerButtons).toBeGreaterThan(0); // the control this test looks for exists for the owner
      await member.page.goto(new URL("/console/settings", server.url).href);
      await member.settle();
      await checkPage(member, "settings as a member");
      expect(await member.page.getByRole("button", { name: /invite|remove/i }).count()).toBe(0);
    }, 120_000);

    test("gets a 403 page on the operator pages", async () => {
      await visit(member, "/console/admin", 403);
      expect(await member.page.getByRole("link", { name: "Admin", exact: true }).count()).toBe(0);
    }, 120_000);
  });

  describe("a person of another account", () => {
    test("never sees account A's keys or requests", async () => {
      await visit(other, "/console/keys");
      const keys = await mainText(other.page);
      expect(keys).not.toContain(ownerKeyName);
      expect(keys).not.toContain(ownerKey.slice(0, 10));
      await visit(other, "/console/requests");
      expect(await other.page.content()).not.toContain(requestA);
      await visit(other, "/console");
      expect(await mainText(other.page)).not.toContain(ownerKeyName);
    }, 120_000);

    test("gets a 404 page for A's request and A's key pages, and a forged revoke of A's key changes nothing", async () => {
      await visit(other, `/console/requests/${requestA}`, 404);
      const paths = await keyPages(owner, ownerKeyName);
      expect(paths.length).toBeGreaterThan(0); // the owner's row links to the key's pages
      for (const path of paths) await visit(other, path, 404);
      expect(await other.page.content()).not.toContain("a browser test"); // A's input is not shown
      const form = await revokeForm(owner, ownerKeyName);
      await visit(other, "/console/keys");
      const status = await postAs(other, form.action, form.fields);
      expect(status).toBe(404);
      expect((await apiAccount(server, ownerKey)).status).toBe(200);
      other.assertClean();
    }, 120_000);
  });
});
