// The browser harness itself: each guard must fail on a page that misbehaves (tiny local pages served
// by Bun.serve), or the console's browser tests would prove nothing.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import type { Browser } from "playwright-core";
import {
  axeViolations,
  describeBrowser,
  launchBrowser,
  openGuardedPage,
  overflowsHorizontally,
  screenshots,
} from "./browser.ts";
import { tempDir } from "./server.ts";

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:";
const PNG_1X1 = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="),
  (c) => c.charCodeAt(0),
);

function page(body: string, headers: Record<string, string> = {}): Response {
  return new Response(
    `<!doctype html><html lang="en"><head><title>t</title></head><body>${body}</body></html>`,
    {
      headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": CSP, ...headers },
    },
  );
}

describeBrowser("browser harness", () => {
  let browser: Browser;
  let other: Awaited<ReturnType<typeof Bun.serve>>;
  let site: Awaited<ReturnType<typeof Bun.serve>>;
  let otherOrigin: string;
  let origin: string;

  beforeAll(async () => {
    // "Another origin": a second local server (another port is another origin); nothing leaves the machine.
    other = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => new Response(PNG_1X1, { headers: { "content-type": "image/png" } }),
    });
    otherOrigin = `http://127.0.0.1:${other.port}`;
    site = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        const path = new URL(req.url).pathname;
        const js = (code: string) => new Response(code, { headers: { "content-type": "text/javascript" } });
        switch (path) {
          case "/clean":
            return page(
              `<main><h1>Clean</h1><img src="/dot.png" alt="A dot"><p id="out">waiting</p></main><script src="/app.js"></script>`,
            );
          case "/off-origin-image":
            // No CSP here, so the browser really sends the request the guard must catch.
            return page(`<main><h1>Off</h1><img src="${otherOrigin}/tracker.png" alt="x"></main>`, {
              "content-security-policy": "",
            });
          case "/off-origin-blocked":
            return page(`<main><h1>Off</h1><img src="${otherOrigin}/tracker.png" alt="x"></main>`);
          case "/off-origin-fetch":
            return page(`<main><h1>Fetch</h1></main><script src="/fetch.js"></script>`, {
              "content-security-policy": "",
            });
          case "/inline-script":
            return page(`<main><h1>Inline</h1></main><script>document.title = "ran"</script>`);
          case "/throws":
            return page(`<main><h1>Throws</h1></main><script src="/throw.js"></script>`);
          case "/inaccessible":
            return page(`<h1>No alt</h1><img src="/dot.png"><button></button>`);
          case "/wide":
            return page(`<main><h1>Wide</h1><pre>${"x".repeat(400)}</pre></main>`);
          case "/missing-page":
            return new Response(
              `<!doctype html><html lang="en"><title>t</title><main><h1>Not found</h1></main>`,
              {
                status: 404,
                headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": CSP },
              },
            );
          case "/missing-image":
            return page(`<main><h1>Broken</h1><img src="/nothing.png" alt="Nothing"></main>`);
          case "/dot.png":
          case "/favicon.ico": // Chromium asks for it; a 404 would be a console error
            return new Response(PNG_1X1, { headers: { "content-type": "image/png" } });
          case "/app.js":
            return js(
              `fetch("/api").then((r) => r.text()).then((t) => { document.getElementById("out").textContent = t; });`,
            );
          case "/fetch.js":
            return js(`fetch(${JSON.stringify(`${otherOrigin}/collect`)}).catch(() => {});`);
          case "/throw.js":
            return js(`throw new Error("boom from the page");`);
          case "/api":
            return new Response("done");
          default:
            return new Response("not found", { status: 404 });
        }
      },
    });
    origin = `http://127.0.0.1:${site.port}`;
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    site?.stop(true);
    other?.stop(true);
  });

  test("a same-origin page with a script, an image and a fetch is clean, and every request is recorded", async () => {
    const g = await openGuardedPage(browser, origin);
    await g.page.goto(`${origin}/clean`);
    await g.page.getByText("done").waitFor();
    expect(g.requests).toEqual(
      expect.arrayContaining([`${origin}/clean`, `${origin}/dot.png`, `${origin}/app.js`, `${origin}/api`]),
    );
    expect(g.problems()).toEqual([]);
    g.assertClean();
    await g.close();
  });

  test("an image from another origin is caught by the request recorder", async () => {
    const g = await openGuardedPage(browser, origin);
    await g.goto("/off-origin-image");
    expect(g.problems()).toContainEqual({ kind: "off-origin request", detail: `${otherOrigin}/tracker.png` });
    expect(() => g.assertClean()).toThrow(/off-origin request: http:\/\/127\.0\.0\.1:\d+\/tracker\.png/);
    await g.close();
  });

  test("a fetch() to another origin is caught", async () => {
    const g = await openGuardedPage(browser, origin);
    await g.goto("/off-origin-fetch");
    expect(g.problems()).toContainEqual({ kind: "off-origin request", detail: `${otherOrigin}/collect` });
    await g.close();
  });

  test("under a strict CSP an off-origin image is still caught, as a request and as a CSP violation", async () => {
    const g = await openGuardedPage(browser, origin);
    await g.goto("/off-origin-blocked");
    const kinds = g.problems().map((p) => p.kind);
    expect(kinds).toContain("off-origin request");
    expect(kinds).toContain("csp violation");
    await g.close();
  });

  test("an inline script refused by the CSP is a CSP violation and a console error", async () => {
    const g = await openGuardedPage(browser, origin);
    await g.goto("/inline-script");
    expect(await g.page.title()).toBe("t"); // the inline script did not run
    expect(g.problems()).toContainEqual({ kind: "csp violation", detail: "script-src-elem blocked inline" });
    expect(
      g.problems().some((p) => p.kind === "console error" && /Content Security Policy/.test(p.detail)),
    ).toBe(true);
    expect(() => g.assertClean()).toThrow(/csp violation/);
    await g.close();
  });

  test("an uncaught error in the page is caught", async () => {
    const g = await openGuardedPage(browser, origin);
    await g.goto("/throws");
    expect(g.problems()).toContainEqual({ kind: "page error", detail: "Error: boom from the page" });
    await g.close();
  });

  test("a page answering 404 is not a problem in itself (the test checks the status); a missing image is", async () => {
    const g = await openGuardedPage(browser, origin);
    const res = await g.page.goto(`${origin}/missing-page`);
    await g.settle();
    expect(res?.status()).toBe(404);
    expect(g.problems()).toEqual([]);
    await g.goto("/missing-image");
    expect(g.problems()).toEqual([
      {
        kind: "console error",
        detail: `Failed to load resource: the server responded with a status of 404 (Not Found) @ ${origin}/nothing.png`,
      },
    ]);
    await g.close();
  });

  test("a tolerated console error is not reported, and only that one", async () => {
    const g = await openGuardedPage(browser, origin, { allowConsoleErrors: [/Content Security Policy/] });
    await g.goto("/inline-script");
    expect(g.problems().map((p) => p.kind)).toEqual(["csp violation"]);
    await g.close();
  });

  test("axe runs under a strict CSP and reports serious and critical violations with their targets", async () => {
    const g = await openGuardedPage(browser, origin);
    await g.goto("/inaccessible");
    const found = await axeViolations(g.page);
    expect(found.map((f) => f.id).sort()).toEqual(["button-name", "image-alt"]);
    expect(found.find((f) => f.id === "image-alt")).toEqual(
      expect.objectContaining({ impact: "critical", targets: ["img"] }),
    );
    // Moderate findings (no main landmark here) only when asked for.
    expect((await axeViolations(g.page, ["moderate"])).map((f) => f.id)).toContain("landmark-one-main");
    g.assertClean(); // injecting axe caused no CSP violation
    await g.close();
  });

  test("axe finds nothing serious on an accessible page", async () => {
    const g = await openGuardedPage(browser, origin);
    await g.goto("/clean");
    expect(await axeViolations(g.page)).toEqual([]);
    await g.close();
  });

  test("screenshots writes a desktop and a 360 px phone PNG; overflow at 360 px is detected", async () => {
    const dir = tempDir("gengate-shots-");
    try {
      const g = await openGuardedPage(browser, origin, { viewport: "phone" });
      await g.goto("/wide");
      expect(await overflowsHorizontally(g.page)).toBe(true);
      await g.goto("/clean");
      expect(await overflowsHorizontally(g.page)).toBe(false);
      const files = await screenshots(g.page, dir, "clean");
      expect(files).toEqual([`${dir}/clean-desktop.png`, `${dir}/clean-phone.png`]);
      // PNG width: bytes 16..19 of the IHDR chunk, big-endian.
      const width = (f: string) => readFileSync(f).readUInt32BE(16);
      expect(width(files[0]!)).toBe(1280);
      expect(width(files[1]!)).toBe(360);
      expect(g.page.viewportSize()).toEqual({ width: 360, height: 740 }); // restored
      await g.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
