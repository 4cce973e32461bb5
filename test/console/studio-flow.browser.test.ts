// The studio end to end in Chromium (issue 17's proof), through the page's own controls: the form's
// fields, the Estimate (htmx) and Run. sandbox/image with num_images changed: the Estimate follows and
// equals POST /v1/estimate; an image uploaded into image_url; Run shows the images and the wallet has
// a STUDIO charge equal to the Estimate. sandbox/video plays in <video> (readyState >= 2),
// sandbox/speech in <audio>; the sandbox `fail` control shows the error and charges nothing; a person
// of another account never sees these runs (404, not in their history). Every page is checked
// (no off-origin request, no console error, axe).
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { formatMoney } from "../../src/console/format.ts";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import {
  describeBrowser,
  type GuardedPage,
  inviteAndSignIn,
  launchBrowser,
  openGuardedPage,
} from "../helpers/browser.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { apiAccount, checkPage, credit } from "./browser-e2e.ts";

interface Entry {
  kind: string;
  /** The ledger's source: API, STUDIO, ADMIN or TOPUP. */
  label: string;
  amount_micro: string;
  request_id: string | null;
}

/** Clicks Run and waits for the run page; returns its request id. */
async function run(g: GuardedPage): Promise<string> {
  await Promise.all([
    g.page.waitForURL(/\/console\/studio\/runs\/[0-9a-f-]{36}$/, { timeout: 30_000 }),
    g.page.getByRole("button", { name: "Run", exact: true }).click(),
  ]);
  return new URL(g.page.url()).pathname.split("/").pop()!;
}

/** Evaluates `expr` in the page until it is truthy (a string, polled from here: the CSP forbids eval). */
async function until(g: GuardedPage, expr: string, what: string, timeout = 30_000): Promise<void> {
  const end = Date.now() + timeout;
  while (!(await g.page.evaluate(expr))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

/** Waits until the media element at `selector` has decoded data (readyState >= 2); returns its facts. */
async function mediaReady(g: GuardedPage, selector: string) {
  await g.page.locator(selector).waitFor({ timeout: 30_000 });
  const el = `document.querySelector(${JSON.stringify(selector)})`;
  // preload="metadata" stops at HAVE_METADATA: ask for the data the way a press of Play would.
  await g.page.evaluate(`(() => { const m = ${el}; m.preload = "auto"; m.load(); })()`);
  await until(g, `(() => { const m = ${el}; return !!m && (m.readyState >= 2 || !!m.error); })()`, selector);
  return (await g.page.evaluate(
    `(() => { const m = ${el}; return { readyState: m.readyState, duration: m.duration, width: m.videoWidth ?? 0, height: m.videoHeight ?? 0, error: m.error ? m.error.code : null }; })()`,
  )) as { readyState: number; duration: number; width: number; height: number; error: number | null };
}

describeBrowser("the studio in the browser: estimate, run, media, failure, privacy", () => {
  let server: TestServer;
  let browser: Browser;
  let g: GuardedPage;
  let key: string;
  const runs: string[] = [];

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
    g = await openGuardedPage(browser, server.url);
    const person = await inviteAndSignIn(g, server);
    key = person.key!;
    const { account } = await apiAccount(server, key);
    await credit(server, account!.id, "5.00");
  }, 60_000);
  afterAll(async () => {
    await g?.close();
    await browser?.close();
    server?.cleanup();
  });

  const wallet = async () => {
    const res = await server.fetch("/v1/account/ledger?limit=100", { key });
    return ((await res.json()) as { data: Entry[] }).data;
  };

  test("sandbox/image: the Estimate follows num_images and equals /v1/estimate; Run charges exactly it", async () => {
    await g.goto("/console/studio?model=sandbox/image");
    await g.page.getByLabel("Prompt", { exact: true }).fill("a lighthouse at dusk");
    await g.page.getByLabel("Width", { exact: true }).fill("96");
    await g.page.getByLabel("Height", { exact: true }).fill("64");
    await g.page.getByLabel("Num images", { exact: true }).fill("3");
    const input = { prompt: "a lighthouse at dusk", width: 96, height: 64, num_images: 3 };
    const api = await server.fetch("/v1/estimate", {
      method: "POST",
      key,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model_id: "sandbox/image", input }),
    });
    expect(api.status).toBe(200);
    const estimate = BigInt(((await api.json()) as { price_usd_micro: string }).price_usd_micro);
    const shown = g.page.getByLabel("Estimate", { exact: true });
    await shown.filter({ hasText: formatMoney(estimate, "USD") }).waitFor({ timeout: 15_000 });

    // An image uploaded into image_url (the files store's checks; its file_id fills the field).
    await g.page.getByLabel("Upload a file for Image URL", { exact: true }).setInputFiles({
      name: "fox.png",
      mimeType: "image/png",
      buffer: Buffer.from(encodePng(96, 64, 3)),
    });
    await g.page.getByText(/^Uploaded fox\.png as file_/).waitFor({ timeout: 15_000 });
    expect(await g.page.getByLabel("Image URL", { exact: true }).inputValue()).toMatch(/^file_/);
    await shown.filter({ hasText: formatMoney(estimate, "USD") }).waitFor({ timeout: 15_000 });
    await checkPage(g, "studio, sandbox/image filled in");

    const before = (await apiAccount(server, key)).account!;
    const id = await run(g);
    runs.push(id);
    for (const n of [1, 2, 3]) {
      const img = g.page.getByRole("img", { name: `Output ${n} of sandbox/image` });
      await img.waitFor({ timeout: 30_000 });
    }
    await until(
      g,
      "[...document.querySelectorAll('figure.output img')].every((i) => i.complete && i.naturalWidth > 0)",
      "the images to load",
    );
    await checkPage(g, "studio run, three images");
    const charge = (await wallet()).find((e) => e.kind === "charge" && e.request_id === id);
    expect(charge).toMatchObject({ label: "STUDIO", key_id: null });
    expect(BigInt(charge!.amount_micro)).toBe(estimate);
    const after = (await apiAccount(server, key)).account!;
    expect(BigInt(before.balance_micro) - BigInt(after.balance_micro)).toBe(estimate);
  }, 120_000);

  test("sandbox/video plays in <video> (readyState >= 2) at the requested length", async () => {
    await g.goto("/console/studio?model=sandbox/video");
    await g.page.getByLabel("Prompt", { exact: true }).fill("waves on a beach");
    await g.page.getByLabel("Duration", { exact: true }).fill("2");
    runs.push(await run(g));
    const v = await mediaReady(g, "video");
    expect(v.error).toBeNull();
    expect(v.readyState).toBeGreaterThanOrEqual(2);
    expect(v.width).toBeGreaterThan(0);
    expect(v.height).toBeGreaterThan(0);
    expect(Math.abs(v.duration - 2)).toBeLessThan(0.1);
    await checkPage(g, "studio run, video");
  }, 120_000);

  test("sandbox/speech plays in <audio>", async () => {
    await g.goto("/console/studio?model=sandbox/speech");
    await g.page.getByLabel("Text", { exact: true }).fill("Hello from the studio.");
    runs.push(await run(g));
    const a = await mediaReady(g, "audio");
    expect(a.error).toBeNull();
    expect(a.readyState).toBeGreaterThanOrEqual(2);
    expect(a.duration).toBeGreaterThan(0);
    await checkPage(g, "studio run, speech");
  }, 120_000);

  test("the sandbox fail control: the error shows, nothing is charged", async () => {
    await g.goto("/console/studio?model=sandbox/image");
    await g.page.getByLabel("Prompt", { exact: true }).fill("this one fails");
    await g.page.getByLabel("Fail", { exact: true }).check();
    await g.page.getByLabel("Delay ms", { exact: true }).fill("300");
    const before = (await apiAccount(server, key)).account!;
    const id = await run(g);
    runs.push(id);
    await g.page.getByText("Nothing was charged").waitFor({ timeout: 30_000 });
    await expect(g.page.getByRole("alert").first().textContent()).resolves.toContain("The run failed");
    await checkPage(g, "studio run, failed");
    const after = (await apiAccount(server, key)).account!;
    expect(after.balance_micro).toBe(before.balance_micro);
    expect((await wallet()).some((e) => e.kind === "charge" && e.request_id === id)).toBe(false);
  }, 120_000);

  test("a person of another account never sees these runs", async () => {
    expect(runs.length).toBeGreaterThanOrEqual(3);
    const other = await openGuardedPage(browser, server.url);
    try {
      await inviteAndSignIn(other, server);
      for (const id of runs) {
        const res = await other.page.goto(new URL(`/console/studio/runs/${id}`, server.url).href);
        expect(`${id}: ${res?.status()}`).toBe(`${id}: 404`);
        const events = await other.page.request.get(
          new URL(`/console/studio/runs/${id}/events`, server.url).href,
        );
        expect(events.status()).toBe(404);
      }
      await other.goto("/console/studio?model=sandbox/image");
      const text = (await other.page.content()) ?? "";
      for (const id of runs) expect(text).not.toContain(id);
      await expect(other.page.getByText("Your studio runs will be listed here.").count()).resolves.toBe(1);
      await checkPage(other, "studio of another account");
    } finally {
      await other.close();
    }
  }, 120_000);
});
