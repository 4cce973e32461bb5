// The one list of pages that scripts/screenshots captures (docs/console/*.png) and that
// test/console/pages.browser.test.ts checks in Chromium (clean, accessible, readable at 360 px).
// Add every console page here as it lands.

import { join } from "node:path";
import type { Browser } from "playwright-core";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { type GuardedPage, inviteAndSignIn, openGuardedPage } from "./browser.ts";
import { runGengate, startServer, type TestServer, tempDir } from "./server.ts";

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

/**
 * The server the page sweep and the screenshots visit: card payments are configured (Stripe for USD,
 * with preset amounts) so the billing page shows its checkout as an operator's would; two sandbox
 * workers, so the last studio entries can show a run waiting in the queue. Its API base is
 * a closed local port: no page of the sweep posts a checkout, so nothing is ever sent there.
 */
export async function startSweepServer(): Promise<TestServer> {
  const config = join(tempDir("gengate-sweep-config-"), "gengate.toml");
  await Bun.write(
    config,
    `[payments.usd]
minimum = "5"
maximum = "500"
presets = ["10", "25", "100"]

[payments.stripe]
secret_key_env = "SWEEP_STRIPE_SECRET_KEY"
webhook_secret_env = "SWEEP_STRIPE_WEBHOOK_SECRET"
api_base = "http://127.0.0.1:9"

[queue]
concurrency = { sandbox = 2 }
`,
  );
  return startServer({
    args: ["--config", config],
    env: {
      SWEEP_STRIPE_SECRET_KEY: "sk_test_sweep_not_a_real_key_0000000000",
      SWEEP_STRIPE_WEBHOOK_SECRET: "whsec_sweep_not_a_real_secret_000000000",
    },
  });
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
  {
    name: "settings",
    title: "Settings: account (members, webhook secret, alert)",
    path: "/console/settings",
    as: "owner",
  },
  {
    name: "settings-rotate",
    title: "Settings: rotating the webhook secret (confirmation dialog)",
    path: "/console/settings",
    as: "owner",
    setup: async (g) => {
      await g.page.getByRole("button", { name: "Rotate secret" }).click();
      await g.page.getByRole("dialog").waitFor();
    },
  },
  {
    name: "settings-security",
    title: "Settings: your sign-in (password, two-factor set-up, sessions)",
    path: "/console/settings/security",
    as: "owner",
    setup: async (g) => {
      await g.page.getByRole("button", { name: "Set up two-factor" }).click();
      await g.page.getByLabel("Code", { exact: true }).waitFor();
      // The QR code (drawn by a separate entry of the binary, loaded at first use) is a real image.
      const qr = g.page.getByRole("img", { name: "QR code of the two-factor set-up link" });
      const drawn = await qr.evaluate((img) => {
        const i = img as unknown as { complete: boolean; naturalWidth: number };
        return i.complete && i.naturalWidth > 0;
      });
      if (!drawn) throw new Error("the two-factor QR code did not render");
    },
  },
  // The money pages (overview, keys, usage, wallet, billing): the owner's account gets some spend first.
  { name: "overview", title: "Overview", path: "/console", as: "owner", setup: withSpend("/console") },
  {
    name: "keys",
    title: "Keys",
    path: "/console/keys",
    as: "owner",
    // The page right after creating a key: `New key` shown once.
    setup: async (g) => {
      await g.page.getByLabel("Name", { exact: true }).fill("nightly build");
      await g.page.getByLabel("Monthly limit", { exact: true }).fill("25");
      await g.page.getByRole("button", { name: "Create key" }).click();
      await g.page.getByLabel("New key", { exact: true }).waitFor();
    },
  },
  { name: "usage", title: "Usage", path: "/console/usage", as: "owner", setup: withSpend("/console/usage") },
  {
    name: "wallet",
    title: "Wallet",
    path: "/console/wallet",
    as: "owner",
    setup: withSpend("/console/wallet"),
  },
  {
    name: "billing",
    title: "Billing (a code just redeemed: its top-up links its receipt)",
    path: "/console/billing",
    as: "owner",
    setup: async (g, server) => {
      await redeemOnBilling(g, server);
    },
  },
  {
    name: "billing-receipt",
    title: "Billing: a top-up's receipt (printable)",
    path: "/console/billing",
    as: "owner",
    setup: async (g, server) => {
      await (await redeemOnBilling(g, server)).click();
      await g.page.getByRole("heading", { name: "Receipt" }).waitFor();
    },
  },
  {
    name: "requests",
    title: "Requests",
    path: "/console/requests",
    as: "owner",
    setup: async (g, server) => {
      await runJobAs(g, server, { prompt: "a lighthouse at dusk", num_images: 1, width: 64, height: 64 });
      await g.goto("/console/requests");
    },
  },
  {
    name: "request-detail",
    title: "Request detail",
    path: "/console/requests",
    as: "owner",
    // A completed image job: its <img> preview loads from the signed same-origin output link.
    setup: async (g, server) => {
      const id = await runJobAs(g, server, { prompt: "a red fox", num_images: 1, width: 64, height: 64 });
      await g.goto(`/console/requests/${id}`);
      await g.page.locator("img[alt^='Output 1']").waitFor();
      // A string: this file is typed without the DOM library.
      await g.page.waitForFunction(
        "(() => { const i = document.querySelector(\"img[alt^='Output 1']\"); return !!i && i.complete && i.naturalWidth > 0; })()",
      );
    },
  },
  {
    name: "studio",
    title: "Studio: a model's form, the estimate as the inputs change, and its code",
    path: "/console/studio",
    as: "owner",
    // num_images changed: the Estimate (htmx partial) follows, and an image uploaded into image_url.
    setup: async (g, server) => {
      await withSpend("/console/studio")(g, server);
      await g.page.getByLabel("Prompt", { exact: true }).fill("a lighthouse at dusk");
      await g.page.getByLabel("Num images", { exact: true }).fill("3");
      await g.page.getByLabel("Estimate", { exact: true }).filter({ hasText: "0.03 USD" }).waitFor();
      await g.page.getByLabel("Upload a file for Image URL", { exact: true }).setInputFiles({
        name: "fox.png",
        mimeType: "image/png",
        buffer: Buffer.from(encodePng(96, 64, 3)),
      });
      await g.page.getByText(/^Uploaded fox\.png as file_/).waitFor();
    },
  },
  {
    name: "studio-chat",
    title: "Studio: a chat with a text model, each reply's cost and the running total",
    path: "/console/studio?model=sandbox/chat",
    as: "owner",
    // Two messages sent: each reply streamed in, then its cost (the ledger's) and the total.
    setup: async (g, server) => {
      await withSpend("/console/studio?model=sandbox/chat")(g, server);
      for (const [i, text] of ["Hello! What can the studio do?", "And what did that cost?"].entries()) {
        await g.page.getByLabel("Message", { exact: true }).fill(text);
        await g.page.getByRole("button", { name: "Send" }).click();
        await g.page.locator("[data-chat-cost]").nth(i).waitFor();
      }
    },
  },
  {
    name: "studio-run",
    title: "Studio: a completed run, its images in place",
    path: "/console/studio",
    as: "owner",
    setup: studioRunOf("sandbox/image", async (g) => {
      await g.page.getByLabel("Prompt", { exact: true }).fill("a lighthouse at dusk");
      await g.page.getByLabel("Num images", { exact: true }).fill("2");
    }),
  },
  {
    name: "studio-run-video",
    title: "Studio: a video run, playable in place",
    path: "/console/studio",
    as: "owner",
    setup: studioRunOf("sandbox/video", async (g) => {
      await g.page.getByLabel("Prompt", { exact: true }).fill("waves on a beach");
      await g.page.getByLabel("Duration", { exact: true }).fill("2");
    }),
  },
  {
    name: "studio-run-speech",
    title: "Studio: a speech run with its audio player",
    path: "/console/studio",
    as: "owner",
    setup: studioRunOf("sandbox/speech", async (g) => {
      await g.page.getByLabel("Text", { exact: true }).fill("Hello from the studio.");
    }),
  },
  {
    name: "studio-run-failed",
    title: "Studio: a failed run (the sandbox fail control): the error, nothing charged",
    path: "/console/studio",
    as: "owner",
    setup: studioRunOf("sandbox/image", async (g) => {
      await g.page.getByLabel("Prompt", { exact: true }).fill("this one fails");
      await g.page.getByLabel("Fail", { exact: true }).check();
    }),
  },
  { name: "admin-accounts", title: "Operator: accounts", path: "/console/admin", as: "operator" },
  {
    name: "admin-account",
    title: "Operator: an account",
    path: "/console/admin",
    as: "operator",
    setup: async (g) => {
      await g.page.locator("table a[href^='/console/admin/accounts/']").first().click();
      await g.page.getByRole("heading", { name: "Credit" }).waitFor();
    },
  },
  {
    name: "admin-requests",
    title: "Operator: requests across accounts",
    path: "/console/admin/requests",
    as: "operator",
    setup: async (g, server) => {
      await runJobAs(g, server, { prompt: "an operator's view", num_images: 1, width: 64, height: 64 });
      await g.goto("/console/admin/requests");
    },
  },
  {
    name: "admin-account-create",
    title: "Operator: Create account (the form open)",
    path: "/console/admin",
    as: "operator",
    setup: async (g) => {
      await g.page.getByText("Create account", { exact: true }).first().click();
      await g.page.getByRole("form", { name: "Create account" }).waitFor();
    },
  },
  {
    name: "admin-people",
    title: "Operator: people and invites",
    path: "/console/admin/people",
    as: "operator",
  },
  { name: "admin-providers", title: "Operator: providers", path: "/console/admin/providers", as: "operator" },
  { name: "admin-margins", title: "Operator: margins", path: "/console/admin/margins", as: "operator" },
  { name: "admin-fx", title: "Operator: exchange rates", path: "/console/admin/fx", as: "operator" },
  {
    name: "admin-codes",
    title: "Operator: redeem codes (a batch just made: its codes shown once)",
    path: "/console/admin/codes",
    as: "operator",
    setup: async (g) => {
      await g.page.getByLabel("Amount", { exact: false }).fill("10");
      await g.page.getByLabel("Count", { exact: false }).fill("3");
      await g.page.getByLabel("Note", { exact: false }).fill("conference");
      await g.page.getByRole("button", { name: "Create codes" }).click();
      await g.page.getByLabel("New codes", { exact: true }).waitFor();
    },
  },
  {
    name: "admin-codes-revoke",
    title: "Operator: revoking a batch's unused codes (confirmation dialog)",
    path: "/console/admin/codes",
    as: "operator",
    setup: async (g, server) => {
      const made = await runGengate([
        "code",
        "create",
        "--amount",
        "5",
        "--currency",
        "USD",
        "--count",
        "2",
        "--data-dir",
        server.dataDir,
      ]);
      if (made.code !== 0) throw new Error(`gengate code create failed: ${made.stderr}`);
      await g.goto("/console/admin/codes");
      await g.page
        .getByRole("button", { name: /^Revoke unused codes of / })
        .first()
        .click();
      await g.page.getByRole("dialog").waitFor();
    },
  },
  { name: "admin-mail", title: "Operator: mail", path: "/console/admin/mail", as: "operator" },
  { name: "admin-orders", title: "Operator: payment orders", path: "/console/admin/orders", as: "operator" },
  // The console pages, once they land (docs/console.md names them), e.g.:
  // { name: "login", title: "Sign in", path: "/console/login", as: "anonymous" },
  // { name: "overview", title: "Overview", path: "/console", as: "owner" },
  // { name: "keys", title: "Keys", path: "/console/keys", as: "owner" },
  // { name: "admin-accounts", title: "Operator: accounts", path: "/console/admin", as: "operator" },
  // Last: these two keep the sweep server's sandbox workers busy for a minute.
  {
    name: "studio-run-open",
    title: "Studio: a run in progress, followed live (status, logs, the amount held)",
    path: "/console/studio",
    as: "owner",
    // Slow on purpose (the sandbox delay control): captured while it runs. Last of the studio
    // entries: it stays open for a minute, inside the person's in-flight cap of 2.
    setup: studioRunOf(
      "sandbox/image",
      async (g) => {
        await g.page.getByLabel("Prompt", { exact: true }).fill("a slow fox");
        await g.page.getByLabel("Delay ms", { exact: true }).fill("60000");
      },
      "running",
    ),
  },
  {
    name: "studio-run-queued",
    title: "Studio: a run waiting in the queue, with the jobs ahead of it",
    path: "/console/studio",
    as: "owner",
    // After studio-run-open: the sweep server runs 2 sandbox workers; that run holds one, a slow API
    // job of the same account the other, so this run waits (inside the person's cap of 2).
    setup: async (g, server) => {
      await slowApiJob(g, server);
      await studioRunOf(
        "sandbox/image",
        async (p) => {
          await p.page.getByLabel("Prompt", { exact: true }).fill("a patient heron");
        },
        "queued",
      )(g, server);
    },
  },
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

/**
 * A setup that gives the signed-in owner's account some spend (once per server): a key made on the
 * Keys page, a credit by the operator CLI, three sandbox jobs through the API; then opens `path`.
 */
function withSpend(path: string): (g: GuardedPage, server: TestServer) => Promise<void> {
  return async (g, server) => {
    if (!spent.has(server)) {
      spent.add(server);
      await g.goto("/console/keys");
      await g.page.getByLabel("Name", { exact: true }).fill("screenshots");
      await g.page.getByRole("button", { name: "Create key" }).click();
      const key = await g.page.getByLabel("New key", { exact: true }).inputValue();
      const account = (await (await server.fetch("/v1/account", { key })).json()) as { id: string };
      const credit = await runGengate(["account", "credit", account.id, "25", "--data-dir", server.dataDir]);
      if (credit.code !== 0) throw new Error(`account credit failed: ${credit.stderr}`);
      for (const model of ["sandbox/image", "sandbox/image", "sandbox/speech"]) {
        const res = await server.fetch(`/v1/run/${model}`, {
          method: "POST",
          key,
          headers: { "content-type": "application/json" },
          body: JSON.stringify(
            model === "sandbox/image" ? { prompt: "a", width: 64, height: 64 } : { text: "hi" },
          ),
        });
        if (res.status !== 200) throw new Error(`${model}: ${res.status} ${await res.text()}`);
      }
    }
    await g.goto(path);
  };
}
const spent = new WeakSet<TestServer>();

/**
 * A setup that opens `model` in the studio (with spend, once per server), fills its form with `fill`,
 * presses Run and waits on the run page: for the final state, the first log line (running) or the
 * IN_QUEUE status.
 */
function studioRunOf(
  model: string,
  fill: (g: GuardedPage) => Promise<void>,
  until: "done" | "running" | "queued" = "done",
): (g: GuardedPage, server: TestServer) => Promise<void> {
  return async (g, server) => {
    await withSpend(`/console/studio?model=${model}`)(g, server);
    await fill(g);
    await Promise.all([
      g.page.waitForURL(/\/console\/studio\/runs\/[0-9a-f-]{36}$/),
      g.page.getByRole("button", { name: "Run", exact: true }).click(),
    ]);
    if (until === "done")
      await g.page.locator("[data-run-events]").waitFor({ state: "detached", timeout: 30_000 });
    else if (until === "running") await g.page.locator("[data-run-logs] li").first().waitFor();
    else await g.page.locator("[data-run-status]").locator(`[data-status="IN_QUEUE"]`).waitFor();
    await g.settle();
  };
}

/** One slow sandbox job (a minute) through the API with a fresh key of the visitor's account. */
async function slowApiJob(g: GuardedPage, server: TestServer): Promise<void> {
  await g.goto("/console/keys");
  await g.page.getByLabel("Name", { exact: true }).fill("slow job");
  await g.page.getByRole("button", { name: "Create key" }).click();
  const key = await g.page.getByLabel("New key", { exact: true }).inputValue();
  const res = await server.fetch("/v1/queue/sandbox/image", {
    method: "POST",
    key,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ prompt: "slow", width: 64, height: 64, sandbox: { delay_ms: 60_000 } }),
  });
  if (res.status !== 202) throw new Error(`slow job: ${res.status} ${await res.text()}`);
}

/** The billing page after redeeming a fresh code there; returns its first Receipt link. */
async function redeemOnBilling(g: GuardedPage, server: TestServer) {
  await withSpend("/console/billing")(g, server);
  await g.page.getByLabel("Code", { exact: true }).fill(await makeCode(server));
  await g.page.getByRole("button", { name: "Redeem" }).click();
  const receipt = g.page.getByRole("link", { name: /^Receipt/ }).first();
  await receipt.waitFor();
  return receipt;
}

/** One fresh USD redeem code of 10.00, made with the operator CLI. */
async function makeCode(server: TestServer): Promise<string> {
  const made = await runGengate([
    "code",
    "create",
    "--amount",
    "10",
    "--currency",
    "USD",
    "--json",
    "--data-dir",
    server.dataDir,
  ]);
  if (made.code !== 0) throw new Error(`gengate code create failed: ${made.stderr}`);
  return (JSON.parse(made.stdout) as { codes: string[] }).codes[0]!;
}
/**
 * Funds the account the page's visitor is looking at (through the admin API: the person is found by
 * the email the header shows), gives it a key, submits a sandbox image job with it and waits until the
 * job is done. Returns the request id.
 */
export async function runJobAs(
  g: GuardedPage,
  server: TestServer,
  input: Record<string, unknown>,
): Promise<string> {
  const admin = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}/admin/v1${path}`, {
      ...init,
      headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
    });
  const email = (await g.page.locator(".sign-out .hint").textContent())?.trim();
  const people = (await (await admin("/people?limit=100")).json()) as {
    data: { email: string; memberships: { account_id: string }[] }[];
  };
  const accountId = people.data.find((p) => p.email === email)?.memberships[0]?.account_id;
  if (!accountId) throw new Error(`no account for ${email}`);
  const credit = await admin(`/accounts/${accountId}/credit`, {
    method: "POST",
    body: JSON.stringify({ amount: "5", reason: "screenshots" }),
  });
  if (credit.status !== 200) throw new Error(`credit: ${credit.status} ${await credit.text()}`);
  const made = await admin(`/accounts/${accountId}/keys`, {
    method: "POST",
    body: JSON.stringify({ name: "pages" }),
  });
  const { key } = (await made.json()) as { key: string };
  const submitted = await server.fetch("/v1/queue/sandbox/image", {
    method: "POST",
    key,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(input),
  });
  if (submitted.status !== 202) throw new Error(`submit: ${submitted.status} ${await submitted.text()}`);
  const { request_id: id } = (await submitted.json()) as { request_id: string };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const st = (await (await server.fetch(`/v1/requests/${id}/status`, { key })).json()) as {
      status: string;
    };
    if (st.status === "COMPLETED" || st.status === "FAILED") return id;
    if (Date.now() > deadline) throw new Error(`request ${id} still ${st.status}`);
    await Bun.sleep(50);
  }
}
