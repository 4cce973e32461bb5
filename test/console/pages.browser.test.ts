// Every page of test/helpers/console-pages.ts in Chromium: no request to another origin, no console
// error or CSP violation, no serious or critical axe violation, and no horizontal scroll at 360 px.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import {
  axeViolations,
  describeBrowser,
  formatAxe,
  launchBrowser,
  overflowsHorizontally,
  VIEWPORTS,
} from "../helpers/browser.ts";
import { PAGES, startSweepServer, visitPages } from "../helpers/console-pages.ts";
import type { TestServer } from "../helpers/server.ts";

describeBrowser("every listed page in Chromium", () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startSweepServer(), launchBrowser()]);
  });
  afterAll(async () => {
    await browser?.close();
    server?.cleanup();
  });

  for (const entry of PAGES) {
    test(`${entry.path} (${entry.name}, as ${entry.as}): clean, accessible, readable at 360 px`, async () => {
      await visitPages(browser, server, [entry], async (_, g) => {
        expect(g.requests).toContain(new URL(entry.path, server.url).href); // the recorder saw the page
        g.assertClean();
        const findings = await axeViolations(g.page);
        await g.page.setViewportSize(VIEWPORTS.phone);
        const overflows = await overflowsHorizontally(g.page);
        if (entry.thirdParty) {
          // Not our markup: report, do not fail.
          if (findings.length) console.log(`axe on ${entry.path} (third party):\n${formatAxe(findings)}`);
          if (overflows) console.log(`${entry.path} (third party) scrolls sideways at 360 px`);
        } else {
          expect(formatAxe(findings)).toBe("");
          expect(overflows).toBe(false);
        }
        g.assertClean();
      });
    });
  }
});
