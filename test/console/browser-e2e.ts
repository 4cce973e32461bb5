// Steps the console's end-to-end browser tests share (console-flow, console-roles, the studio
// tests): their server, browser and page, the checks every visited page gets, the API calls a test makes
// with a key, and the Keys page's create and revoke, all through the accessible names the pages
// promise (docs/console.md "Accessible names").
import { afterAll, beforeAll, expect } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { displayMoney } from "../../src/console/format.ts";
import {
  axeViolations,
  formatAxe,
  type GuardedPage,
  launchBrowser,
  openGuardedPage,
} from "../helpers/browser.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

/**
 * A server, a browser and a page guarded against other origins and errors, for the tests of one
 * describe block: started before them, closed after. Read its fields inside the tests.
 */
export function browserSession(): { server: TestServer; browser: Browser; g: GuardedPage } {
  const session = {} as { server: TestServer; browser: Browser; g: GuardedPage };
  beforeAll(async () => {
    [session.server, session.browser] = await Promise.all([startServer(), launchBrowser()]);
    session.g = await openGuardedPage(session.browser, session.server.url);
  }, 60_000);
  afterAll(async () => {
    await session.g?.close();
    await session.browser?.close();
    session.server?.cleanup();
  });
  return session;
}

/**
 * The checks every page a flow visits gets: no request to another origin, no console error, CSP
 * violation or page error so far (assertClean), and no serious or critical axe violation. `label` names
 * the page in a failure.
 */
export async function checkPage(g: GuardedPage, label: string): Promise<void> {
  g.assertClean();
  const findings = await axeViolations(g.page);
  expect(`${label} (${g.page.url()}): ${formatAxe(findings)}`).toBe(`${label} (${g.page.url()}): `);
}

/** Opens `path`, checks the status of the document answer, then checks the page (checkPage). */
export async function visit(g: GuardedPage, path: string, status = 200): Promise<void> {
  const res = await g.page.goto(new URL(path, g.origin).href);
  await g.settle();
  expect(`${path}: ${res?.status()}`).toBe(`${path}: ${status}`);
  await checkPage(g, path);
}

export interface ApiAccount {
  id: string;
  currency: string;
  balance_micro: string;
  month_spent_micro: string;
}

/** GET /v1/account with `key`: the status, and the account when 200. */
export async function apiAccount(
  server: TestServer,
  key: string,
): Promise<{ status: number; account: ApiAccount | null }> {
  const res = await server.fetch("/v1/account", { key });
  const body = (await res.json()) as ApiAccount;
  return { status: res.status, account: res.status === 200 ? body : null };
}

/** Credits an account through the admin API (the first start's admin token). */
export async function credit(server: TestServer, accountId: string, amount: string): Promise<void> {
  const res = await fetch(`${server.url}/admin/v1/accounts/${accountId}/credit`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ amount, reason: "browser test" }),
  });
  expect(`credit ${res.status} ${res.status === 200 ? "" : await res.text()}`).toBe("credit 200 ");
}

/** A synchronous sandbox job with `key` (POST /v1/run/sandbox/image): the response and its request id. */
export async function runImage(
  server: TestServer,
  key: string,
  images = 1,
): Promise<{ status: number; requestId: string | null }> {
  const res = await server.fetch("/v1/run/sandbox/image", {
    key,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ prompt: "a browser test", num_images: images }),
  });
  await res.arrayBuffer();
  return { status: res.status, requestId: res.headers.get("x-fal-request-id") };
}

/**
 * Keys page: fills `Name` and `Monthly limit`, clicks `Create key`, and returns the value of the
 * read-only `New key` field the page shows once. Checks the page before and after.
 */
export async function createKey(g: GuardedPage, name: string, monthlyLimit: string): Promise<string> {
  await visit(g, "/console/keys");
  await g.page.getByLabel("Name", { exact: true }).fill(name);
  await g.page.getByLabel("Monthly limit", { exact: true }).fill(monthlyLimit);
  await g.page.getByRole("button", { name: "Create key", exact: true }).click();
  const field = g.page.getByLabel("New key", { exact: true });
  await field.waitFor({ timeout: 30_000 });
  await g.settle();
  expect(await field.getAttribute("readonly")).not.toBeNull();
  await checkPage(g, "keys page with the new key");
  return await field.inputValue();
}

/** The row of the keys table that names `name` (docs/console.md "Accessible names": a `Revoke` per row). */
export function keyRow(page: Page, name: string) {
  return page.getByRole("row").filter({ hasText: name });
}

/**
 * Keys page: `Revoke` in the key's row, then the confirmation `Revoke key`. Checks the page with the
 * confirmation open and after. `around.before` runs just before the confirming click and
 * `around.after` as soon as the answer loaded, before the (slow) checks: a key used by `before` is
 * still in the server's few-second principal cache when `after` uses it.
 */
export async function revokeKey(
  g: GuardedPage,
  name: string,
  around: { before?: () => Promise<void>; after?: () => Promise<void> } = {},
): Promise<void> {
  await visit(g, "/console/keys");
  const row = keyRow(g.page, name);
  expect(await row.count()).toBe(1);
  await row.getByRole("button", { name: "Revoke", exact: true }).click();
  const confirm = g.page.getByRole("button", { name: "Revoke key", exact: true });
  await confirm.waitFor({ timeout: 30_000 });
  await g.settle();
  await checkPage(g, "revoke confirmation");
  await around.before?.();
  await Promise.all([g.page.waitForEvent("load"), confirm.click()]);
  await around.after?.();
  await g.settle();
  await checkPage(g, "keys page after revoking");
}

/**
 * Whether the page's <main> shows the amount `micro`: when the page marks its amounts up with the exact
 * figure (`<data value="N">` or `data-micro="N"`), an element marked N whose text is displayMoney's (the
 * console's one display rule); otherwise that text anywhere in <main>.
 */
export async function showsAmount(page: Page, micro: bigint, currency: string): Promise<boolean> {
  const shown = displayMoney(micro, currency).text;
  const text = (await mainText(page)).includes(shown);
  if ((await page.locator("main [data-micro], main data[value]").count()) === 0) return text;
  // The page marks its amounts up: the exact figure must be one of them, shown by the display rule.
  const marked = page.locator(`main [data-micro="${micro}"], main data[value="${micro}"]`);
  if ((await marked.count()) === 0) return false;
  // biome-ignore lint/performance/useDomNodeTextContent: playwright's innerText, on purpose: what is shown
  return (await marked.first().innerText()).includes(shown);
}

/** The text a person sees in the page's <main> (rendered text: hidden elements left out). */
export async function mainText(page: Page): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: playwright's innerText, on purpose: what is shown
  return await page.locator("main").innerText();
}

/** The value of the session cookie in the guarded page's context (null when there is none). */
export async function sessionCookie(g: GuardedPage): Promise<string | null> {
  const c = (await g.context.cookies()).find((x) => x.name === "gengate_session");
  return c?.value ?? null;
}

/** A GET of a console page with only `cookie` (no browser): the status and where it redirects. */
export async function replay(
  server: TestServer,
  path: string,
  cookie: string,
): Promise<{ status: number; location: string | null }> {
  const res = await fetch(`${server.url}${path}`, {
    headers: { cookie: `gengate_session=${cookie}` },
    redirect: "manual",
  });
  await res.arrayBuffer();
  return { status: res.status, location: res.headers.get("location") };
}
