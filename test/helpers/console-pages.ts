// The one list of pages that scripts/screenshots captures (docs/console/*.png) and that
// test/console/pages.browser.test.ts checks in Chromium (clean, accessible, readable at 360 px).
// Add every console page here as it lands.
import type { Browser } from "playwright-core";
import { type GuardedPage, inviteAndSignIn, openGuardedPage } from "./browser.ts";
import { runGengate, type TestServer } from "./server.ts";

/** Who looks at the page: nobody signed in, the owner of a fresh account, or an operator (also an owner). */
export type Visitor = "anonymous" | "owner" | "operator";

export interface PageEntry {
  /** File stem: docs/console/<name>-desktop.png and <name>-phone.png. */
  name: string;
  /** The heading in docs/console.md. */
  title: string;
  path: string;
  as: Visitor;
  /** Not our markup (Scalar): axe and 360 px findings are printed, not failed. */
  thirdParty?: boolean;
  /** Console errors to tolerate, with the reason in a comment. */
  tolerate?: RegExp[];
  /**
   * Runs after the page settled, before the checks and the screenshots: make data the page shows
   * (e.g. create a key), open a dialog, wait for a chart. Navigating elsewhere is fine: the current page
   * is the one captured.
   */
  setup?: (g: GuardedPage, server: TestServer) => Promise<void>;
}

/** Opens a fresh one-time invite link (`gengate user invite --json`) in the guarded page. */
async function openInvite(g: GuardedPage, server: TestServer): Promise<void> {
  const run = await runGengate([
    "user",
    "invite",
    "--email",
    `invited-${Date.now()}@example.test`,
    "--data-dir",
    server.dataDir,
    "--public-url",
    server.url,
    "--json",
  ]);
  if (run.code !== 0) throw new Error(`gengate user invite failed (${run.code}): ${run.stderr}`);
  await g.goto(new URL((JSON.parse(run.stdout) as { url: string }).url).pathname);
}

export const PAGES: PageEntry[] = [
  // The signed-out pages (src/console/auth-pages.ts) and the console's error page.
  { name: "login", title: "Sign in", path: "/console/login", as: "anonymous" },
  { name: "signup", title: "Sign up", path: "/console/signup", as: "anonymous" },
  { name: "forgot", title: "Forgot password", path: "/console/forgot", as: "anonymous" },
  {
    name: "invite",
    title: "Accept invite (/console/invite/<token>, from the sign-in page)",
    path: "/console/login",
    as: "anonymous",
    setup: openInvite,
  },
  {
    name: "welcome",
    title: "Welcome: the Default key shown once (after an invite)",
    path: "/console/login",
    as: "anonymous",
    setup: async (g, server) => {
      await inviteAndSignIn(g, server);
    },
  },
  { name: "not-found", title: "Error page (404)", path: "/console/no-such-page", as: "owner" },
  {
    name: "api-reference",
    title: "API reference (/docs)",
    path: "/docs",
    as: "anonymous",
    thirdParty: true,
    // The page names no icon, so Chromium asks for /favicon.ico: a 404, logged as a console error.
    tolerate: [/404.*\/favicon\.ico$/],
    // Scalar renders after fetching /v1/openapi.json.
    setup: (g) =>
      g.page
        .getByRole("heading", { name: /gengate/i })
        .first()
        .waitFor({ timeout: 30_000 }),
  },
  // The console pages, once they land (CONSOLE.md names them), e.g.:
  // { name: "login", title: "Sign in", path: "/console/login", as: "anonymous" },
  // { name: "overview", title: "Overview", path: "/console", as: "owner" },
  // { name: "keys", title: "Keys", path: "/console/keys", as: "owner" },
  // { name: "admin-accounts", title: "Operator: accounts", path: "/console/admin", as: "operator" },
];

/**
 * Gives a visitor's fresh account something to show (so pages and screenshots show figures, not only
 * empty states): a credit through the admin API, two sandbox image jobs and one failed job with its
 * Default key. Skipped when the server printed no admin token (a data dir that was not fresh).
 */
async function seedAccount(server: TestServer, key: string): Promise<void> {
  if (!server.adminToken) return;
  const account = (await (await server.fetch("/v1/account", { key })).json()) as { id: string };
  const credit = await fetch(`${server.url}/admin/v1/accounts/${account.id}/credit`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ amount: "25", reason: "screenshots" }),
  });
  if (credit.status !== 200) throw new Error(`credit failed: ${credit.status} ${await credit.text()}`);
  for (const input of [
    { prompt: "a lighthouse at dusk", num_images: 2 },
    { prompt: "a red bicycle" },
    { prompt: "this one fails", sandbox: { fail: true } },
  ]) {
    const res = await server.fetch("/v1/run/sandbox/image", {
      key,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(input),
    });
    await res.arrayBuffer();
  }
}

/**
 * Opens each entry in its own guarded page (a fresh context, signed in as its visitor: one invited
 * person per visitor kind, signed in once) and hands it to `fn` after the page settled and its setup ran.
 * Closes every page; the first error stops the walk.
 */
export async function visitPages(
  browser: Browser,
  server: TestServer,
  entries: readonly PageEntry[],
  fn: (entry: PageEntry, g: GuardedPage) => Promise<void>,
): Promise<void> {
  const sessions = new Map<Visitor, Awaited<ReturnType<GuardedPage["context"]["storageState"]>>>();
  for (const entry of entries) {
    if (entry.as !== "anonymous" && !sessions.has(entry.as)) {
      const g = await openGuardedPage(browser, server.url);
      try {
        const person = await inviteAndSignIn(g, server, { operator: entry.as === "operator" });
        if (person.key) await seedAccount(server, person.key);
        sessions.set(entry.as, await g.context.storageState());
      } finally {
        await g.close();
      }
    }
    const g = await openGuardedPage(browser, server.url, {
      allowConsoleErrors: entry.tolerate,
      storageState: sessions.get(entry.as),
    });
    try {
      await g.goto(entry.path);
      if (entry.setup) {
        await entry.setup(g, server);
        await g.settle();
      }
      await fn(entry, g);
    } finally {
      await g.close();
    }
  }
}
