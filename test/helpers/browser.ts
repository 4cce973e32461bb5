// Browser-test harness: Debian's Chromium driven by playwright-core (which downloads no browser).
// See docs/console.md, "Browser tests and screenshots".
//
//   const browser = await launchBrowser();
//   const guarded = await openGuardedPage(browser, server.url);
//   await guarded.goto("/console/login"); // navigates, then waits until no request is in flight
//   ...
//   expect(await axeViolations(guarded.page)).toEqual([]);
//   guarded.assertClean(); // no request to another origin, no console error, no CSP violation, no page error
//   await guarded.close();

import { describe } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { runGengate, type TestServer } from "./server.ts";

const ROOT = resolve(import.meta.dir, "../..");

/** The Chromium binary: GENGATE_CHROMIUM, else Debian's package (`apt-get install chromium`). */
export function chromiumPath(): string {
  return process.env.GENGATE_CHROMIUM || "/usr/bin/chromium";
}

/** The flags every launch uses: headless, no sandbox (root in CI), nothing that phones home. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * `describe` for a browser test file. Without Chromium the suite is skipped with a printed notice
 * (fine for a developer's `npm test`), unless GENGATE_BROWSER_REQUIRED=1 (the CI browser step), where
 * the suite runs and fails at launch instead: a CI run without a browser never passes silently.
 */
export function describeBrowser(name: string, fn: () => void): void {
  // CI's `npm test` step sets GENGATE_BROWSER_BINARY_ONLY=1: its browser step runs every browser test
  // against the compiled binary (the product), and running them against the sources first as well
  // took about 270 s of a 1,740 s run (.ci/run).
  if (process.env.GENGATE_BROWSER_BINARY_ONLY === "1" && !process.env.GENGATE_BIN) {
    console.warn(`browser tests skipped ("${name}"): GENGATE_BROWSER_BINARY_ONLY=1 and no GENGATE_BIN`);
    describe.skip(name, fn);
    return;
  }
  if (existsSync(chromiumPath()) || process.env.GENGATE_BROWSER_REQUIRED === "1") {
    describe(name, fn);
    return;
  }
  console.warn(
    `browser tests skipped ("${name}"): no Chromium at ${chromiumPath()} ` +
      "(apt-get install chromium, or set GENGATE_CHROMIUM); CI installs it and runs them",
  );
  describe.skip(name, fn);
}

/**
 * Launches headless Chromium. Playwright gives every launch a fresh temporary user-data-dir
 * (playwright_chromiumdev_profile-*) and deletes it on close; `--user-data-dir` in args is refused.
 */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!existsSync(executablePath)) {
    throw new Error(`no Chromium at ${executablePath}: apt-get install chromium, or set GENGATE_CHROMIUM`);
  }
  return await chromium.launch({ executablePath, args: CHROMIUM_ARGS, timeout: 30_000 });
}

export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 360, height: 740 },
} as const;
export type ViewportName = keyof typeof VIEWPORTS;

/** One thing a guarded page did that a page of ours must never do. */
export interface PageProblem {
  kind: "off-origin request" | "console error" | "csp violation" | "page error";
  detail: string;
}

export interface GuardedPage {
  context: BrowserContext;
  page: Page;
  /** The origin every request must go to (the server's). */
  origin: string;
  /** Every URL the pages of this context requested (documents, assets, fetches, websockets), in order. */
  requests: string[];
  /** What went wrong so far: off-origin requests, console errors, CSP violations, uncaught errors. */
  problems(): PageProblem[];
  /** Opens `path` (relative to origin, or an absolute URL) and waits until the page settled (settle()). */
  goto(path: string): Promise<void>;
  /**
   * Waits until no request of this context has been in flight for `quietMs` (after the page's load
   * event). Use it instead of playwright's "networkidle", which never fires on some pages (Scalar's).
   */
  settle(quietMs?: number, timeoutMs?: number): Promise<void>;
  /** Throws, listing them, when problems() is not empty. */
  assertClean(): void;
  close(): Promise<void>;
}

export interface GuardOptions {
  viewport?: ViewportName | { width: number; height: number };
  /** Console errors to tolerate (matched against "text @ url"); use sparingly and say why. */
  allowConsoleErrors?: RegExp[];
  /** Extra origins a page may reach (only for the harness's own tests). */
  allowOrigins?: string[];
  /** Cookies to start with (another context's `storageState()`: a signed-in session). */
  storageState?: Awaited<ReturnType<BrowserContext["storageState"]>>;
}

/** URLs that never leave the page: inline data and object URLs (CSP allows data: and blob: images). */
function isLocalScheme(url: string): boolean {
  return /^(data|blob|about):/.test(url);
}

/**
 * A new browser context and page that record every request and fail on any request to another origin
 * than `origin`, any console error, any CSP violation and any uncaught page error (assertClean()).
 * A navigation answered with an error status (a 404 page) is not a problem: the test checks the status.
 * CSP violations are caught twice on purpose: Chromium's console message, and the page's
 * `securitypolicyviolation` event reported through a binding (a request blocked by CSP still fires
 * playwright's `request` event, so it is counted as off-origin too).
 */
export async function openGuardedPage(
  browser: Browser,
  origin: string,
  options: GuardOptions = {},
): Promise<GuardedPage> {
  const home = new URL(origin).origin;
  const allowed = new Set([home, ...(options.allowOrigins ?? []).map((o) => new URL(o).origin)]);
  const viewport =
    typeof options.viewport === "object" ? options.viewport : VIEWPORTS[options.viewport ?? "desktop"];
  const context = await browser.newContext({
    viewport,
    serviceWorkers: "block", // their requests would escape the recorder; the console has none
    ...(options.storageState ? { storageState: options.storageState } : {}),
  });
  const requests: string[] = [];
  const problems: PageProblem[] = [];
  const check = (url: string) => {
    requests.push(url);
    if (isLocalScheme(url)) return;
    let o: string;
    try {
      o = new URL(url).origin;
    } catch {
      o = url;
    }
    if (!allowed.has(o)) problems.push({ kind: "off-origin request", detail: url });
  };
  const inflight = new Map<unknown, string>();
  const documents = new Set<string>();
  let lastActivity = Date.now();
  context.on("request", (r) => {
    check(r.url());
    if (r.isNavigationRequest()) documents.add(r.url());
    // A status stream stays open by design: it does not keep a page from settling.
    if (r.resourceType() !== "eventsource") inflight.set(r, r.url());
    lastActivity = Date.now();
  });
  const done = (r: unknown) => {
    inflight.delete(r);
    lastActivity = Date.now();
  };
  context.on("requestfinished", done);
  context.on("requestfailed", done);
  context.on("page", (p) => p.on("websocket", (ws) => check(ws.url())));
  context.on("console", (m) => {
    if (m.type() !== "error") return;
    const where = m.location().url;
    // A page answering with an error status (a 404 page, a 401 sign-in form) logs this; the test asserts
    // that status itself. An asset, fetch or htmx request answering an error is still a problem.
    if (
      /^Failed to load resource: the server responded with a status of/.test(m.text()) &&
      documents.has(where)
    )
      return;
    const text = where ? `${m.text()} @ ${where}` : m.text();
    if (options.allowConsoleErrors?.some((re) => re.test(text))) return;
    problems.push({ kind: "console error", detail: text });
  });
  context.on("weberror", (e) => problems.push({ kind: "page error", detail: String(e.error()) }));
  await context.exposeBinding(
    "__gengateCspViolation",
    (_source, v: { directive: string; blocked: string }) => {
      problems.push({ kind: "csp violation", detail: `${v.directive} blocked ${v.blocked}` });
    },
  );
  await context.addInitScript(`addEventListener("securitypolicyviolation", (e) => {
    window.__gengateCspViolation({ directive: e.violatedDirective, blocked: e.blockedURI });
  }, true);`);
  const page = await context.newPage();
  const settle = async (quietMs = 300, timeoutMs = 30_000) => {
    await page.waitForLoadState("load", { timeout: timeoutMs });
    const deadline = Date.now() + timeoutMs;
    while (inflight.size > 0 || Date.now() - lastActivity < quietMs) {
      if (Date.now() > deadline) {
        throw new Error(
          `requests still in flight after ${timeoutMs} ms: ${[...inflight.values()].join(", ")}`,
        );
      }
      await Bun.sleep(50);
    }
  };
  return {
    context,
    page,
    origin: home,
    requests,
    problems: () => [...problems],
    async goto(path) {
      await page.goto(new URL(path, home).href);
      await settle();
    },
    settle,
    assertClean() {
      if (problems.length === 0) return;
      const lines = problems.map((p) => `  ${p.kind}: ${p.detail}`).join("\n");
      throw new Error(`the page misbehaved (${problems.length}):\n${lines}`);
    },
    close: () => context.close(),
  };
}

/** One axe rule broken on a page, with the CSS selectors of the offending elements. */
export interface AxeFinding {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

let axeSource: string | null = null;

/**
 * Runs axe-core on the page and returns the violations of the given impacts (serious and critical by
 * default). axe is evaluated through the DevTools protocol (page.evaluate), which the page's CSP does not
 * govern, so the page keeps its real CSP (a script tag would be refused under `script-src 'self'`, and
 * bypassing CSP would hide the violations the guard looks for).
 */
export async function axeViolations(
  page: Page,
  impacts: readonly string[] = ["serious", "critical"],
): Promise<AxeFinding[]> {
  axeSource ??= readFileSync(join(ROOT, "node_modules/axe-core/axe.min.js"), "utf8");
  if (!(await page.evaluate("typeof window.axe === 'object'"))) await page.evaluate(axeSource);
  const all = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"] }).then((r) =>
    r.violations.map((v) => ({
      id: v.id,
      impact: v.impact || "",
      help: v.help,
      targets: v.nodes.map((n) => n.target.map(String).join(" >>> ")),
    })))`)) as AxeFinding[];
  return all.filter((f) => impacts.includes(f.impact));
}

/** A one-line-per-rule summary of axe findings, for test failure messages and reports. */
export function formatAxe(findings: AxeFinding[]): string {
  return findings
    .map((f) => `${f.impact} ${f.id} (${f.help}): ${f.targets.length} x ${f.targets.slice(0, 5).join(", ")}`)
    .join("\n");
}

/** True when the page is wider than its viewport (a horizontal scrollbar: unreadable at 360 px). */
export async function overflowsHorizontally(page: Page): Promise<boolean> {
  return (await page.evaluate(
    "document.documentElement.scrollWidth > document.documentElement.clientWidth + 1",
  )) as boolean;
}

/**
 * Full-page PNGs of the current page at each viewport: `${dir}/${name}-desktop.png` and
 * `${dir}/${name}-phone.png` (360 px), cut at `maxHeight` px. Restores the page's viewport; returns the
 * files written.
 */
export async function screenshots(
  page: Page,
  dir: string,
  name: string,
  viewports: readonly ViewportName[] = ["desktop", "phone"],
  maxHeight = 2400,
): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const before = page.viewportSize();
  const files: string[] = [];
  for (const v of viewports) {
    await page.setViewportSize(VIEWPORTS[v]);
    await page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))");
    const file = join(dir, `${name}-${v}.png`);
    const height = (await page.evaluate("document.documentElement.scrollHeight")) as number;
    const clip = { x: 0, y: 0, width: VIEWPORTS[v].width, height: Math.min(height, maxHeight) };
    await page.screenshot({ path: file, fullPage: true, clip, animations: "disabled" });
    files.push(file);
  }
  if (before) await page.setViewportSize(before);
  return files;
}

export interface ConsolePerson {
  email: string;
  password: string;
  /** The Default key shown once after accepting an invite that created an account, else null. */
  key: string | null;
}

let people = 0;

/**
 * Makes a console person and signs the guarded page's context in as them: `gengate user invite --json`
 * on the server's data dir (NEEDS the people CLI of issue 15: `gengate user invite`), then the invite
 * page: field `Password`, button `Set password`. Without `account` the invite creates a new account
 * with the person as its owner; with it, the person joins that account with `role`.
 */
export async function inviteAndSignIn(
  g: GuardedPage,
  server: TestServer,
  options: {
    email?: string;
    password?: string;
    account?: string;
    role?: "owner" | "member";
    operator?: boolean;
  } = {},
): Promise<ConsolePerson> {
  people += 1;
  const email = options.email ?? `person${people}-${Date.now()}@example.test`;
  const password = options.password ?? `correct horse battery ${people}`;
  const args = [
    "user",
    "invite",
    "--email",
    email,
    "--data-dir",
    server.dataDir,
    "--public-url",
    server.url,
    "--json",
  ];
  if (options.account) args.push("--account", options.account, "--role", options.role ?? "member");
  if (options.operator) args.push("--operator");
  const run = await runGengate(args);
  if (run.code !== 0) throw new Error(`gengate ${args.join(" ")} failed (${run.code}): ${run.stderr}`);
  const { url } = JSON.parse(run.stdout) as { url: string };
  const link = new URL(url);
  await g.goto(link.pathname + link.search);
  await g.page.getByLabel("Password", { exact: true }).fill(password);
  await g.page.getByRole("button", { name: "Set password" }).click();
  await signedIn(g);
  // An invite that made a new account shows its Default key once, in the `New key` field.
  const field = g.page.getByLabel("New key", { exact: true });
  const key = (await field.count()) > 0 ? await field.inputValue() : null;
  return { email, password, key };
}

/** Waits for the `Sign out` button of every signed-in page (docs/console.md), then for the page to settle. */
export async function signedIn(g: GuardedPage): Promise<void> {
  await g.page.getByRole("button", { name: "Sign out" }).waitFor({ timeout: 30_000 });
  await g.settle();
}

/** Signs in on /console/login (fields `Email` and `Password`, button `Sign in`). */
export async function signIn(
  g: GuardedPage,
  person: Pick<ConsolePerson, "email" | "password">,
): Promise<void> {
  await g.goto("/console/login");
  await g.page.getByLabel("Email", { exact: true }).fill(person.email);
  await g.page.getByLabel("Password", { exact: true }).fill(person.password);
  await g.page.getByRole("button", { name: "Sign in" }).click();
  await signedIn(g);
}
