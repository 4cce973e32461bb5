// The API reference page (/docs, Scalar) in a real browser: everything it loads comes from this server
// (docs/decisions.md: the docs work air-gapped). axe findings are printed, not asserted: the page is
// Scalar's, not ours (see docs/console.md, "Browser tests and screenshots").
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import {
  axeViolations,
  describeBrowser,
  formatAxe,
  launchBrowser,
  openGuardedPage,
} from "../helpers/browser.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

describeBrowser("GET /docs in Chromium", () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  });
  afterAll(async () => {
    await browser?.close();
    server?.cleanup();
  });

  test("renders the reference with no request to another origin, no console error, no CSP violation", async () => {
    // The page names no icon, so Chromium asks for /favicon.ico, which gengate answers 404 (a console
    // error). Tolerated here only; console pages must name their icon.
    const g = await openGuardedPage(browser, server.url, { allowConsoleErrors: [/404.*\/favicon\.ico$/] });
    await g.goto("/docs");
    // Scalar renders the operations from /v1/openapi.json; the spec's title shows once it has.
    await g.page
      .getByRole("heading", { name: /gengate/i })
      .first()
      .waitFor({ timeout: 30_000 });
    await g.settle();
    expect(g.requests).toContain(`${server.url}/docs/assets/scalar.js`);
    expect(g.requests).toContain(`${server.url}/v1/openapi.json`);
    g.assertClean();
    const findings = await axeViolations(g.page);
    console.log(`axe on /docs (Scalar): ${findings.length} serious/critical rule(s)\n${formatAxe(findings)}`);
    g.assertClean();
    await g.close();
  });
});
