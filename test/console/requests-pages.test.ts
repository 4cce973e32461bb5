import { afterAll, describe, expect, test } from "bun:test";
import { finalJob, submitQueued, testWorkerPool } from "../helpers/context.ts";
import { consoleApp } from "./helpers.ts";

const c = await consoleApp();
const { ctx } = c;
await ctx.ledger.topUp(c.account.id, 100_000_000n, null);
const ci = await ctx.accounts.createKey(c.account.id, { name: "ci" });

const submit = (model: string, input: Record<string, unknown>, key = c.key) =>
  submitQueued(c, model, input, key);
const finalOf = (id: string) => finalJob(ctx, id);

const pool = testWorkerPool(ctx, { concurrency: () => 1 });
afterAll(() => pool.stop(1000));
const image = await submit("sandbox/image", { prompt: "a <b>cat</b>", num_images: 1, width: 64, height: 64 });
await finalOf(image);
const failed = await submit(
  "sandbox/video",
  { prompt: "p", duration: 2, resolution: "480p", sandbox: { fail: true } },
  ci.key,
);
await finalOf(failed);
const speech = await submit("sandbox/speech", { text: "hello", duration: 2 });
await finalOf(speech);

await c.person("owner@example.com");
const b = await c.signedIn("owner@example.com");

const rowIds = (text: string) =>
  [...text.matchAll(/href="\/console\/requests\/([0-9a-f-]{36})"/g)].map((m) => m[1]);

describe("requests list", () => {
  test("every request, newest first, with model, status, key and price; the nav marks Requests", async () => {
    const page = await b.page("/console/requests");
    expect(page.status).toBe(200);
    expect(rowIds(page.text)).toEqual([speech, failed, image]);
    expect(page.text).toContain('<a href="/console/requests" aria-current="page">Requests</a>');
    expect(page.text).toContain("sandbox/video");
    expect(page.text).toContain("FAILED");
    expect(page.text).toContain("ci");
    expect(page.text).toContain("0.01 USD"); // the image's charge
    expect(page.text).not.toContain(">Older<");
  });

  test("each filter: key, model, status, source; and combined", async () => {
    const ids = async (q: string) => {
      const p = await b.page(`/console/requests?${q}`);
      expect(p.status).toBe(200);
      return rowIds(p.text);
    };
    expect(await ids(`key=${ci.keyId}`)).toEqual([failed]);
    expect(await ids(`key=${c.keyId}`)).toEqual([speech, image]);
    expect(await ids("model=sandbox%2Fimage")).toEqual([image]);
    expect(await ids("status=FAILED")).toEqual([failed]);
    expect(await ids("status=COMPLETED")).toEqual([speech, image]);
    expect(await ids("source=API")).toEqual([speech, failed, image]);
    expect(await ids("source=STUDIO")).toEqual([]);
    expect(await ids(`key=${c.keyId}&status=COMPLETED&model=sandbox%2Fspeech`)).toEqual([speech]);
    // The chosen values stay selected in the form.
    const p = await b.page("/console/requests?status=FAILED&source=API");
    expect(p.text).toContain('<option value="FAILED" selected>');
    expect(p.text).toContain('<option value="API" selected>');
  });

  test("bad filter values: a 400 page with the message and the form, never a 500", async () => {
    for (const q of [
      "status=DONE",
      "source=ADMIN",
      "key=nope",
      "cursor=zzz",
      `model=${"m".repeat(250)}`,
      "status=%3Cscript%3E",
    ]) {
      const p = await b.page(`/console/requests?${q}`);
      expect(p.status).toBe(400);
      expect(p.text).toContain('role="alert"');
      expect(p.text).toContain('<form class="filters"');
      expect(p.text).not.toContain("<script>");
    }
  });

  test("paging: Older carries the cursor and the filters; every request is seen once", async () => {
    // A key of its own with room for all 51 open at once: one worker drains them, and on a slower
    // backend (PostgreSQL) more than the default 20 were still open, so a submit got 429.
    const bulk = await ctx.accounts.createKey(c.account.id, { name: "bulk", maxInFlight: 60 });
    for (let i = 0; i < 51; i++)
      await submit("sandbox/image", { prompt: `p${i}`, width: 64, height: 64 }, bulk.key);
    const first = await b.page("/console/requests?model=sandbox%2Fimage");
    const firstIds = rowIds(first.text);
    expect(firstIds.length).toBe(50);
    const older = /href="(\/console\/requests\?model=sandbox%2Fimage&amp;cursor=[0-9a-f-]+)">Older</.exec(
      first.text,
    );
    expect(older).not.toBeNull();
    const second = await b.page(older![1]!.replaceAll("&amp;", "&"));
    const secondIds = rowIds(second.text);
    expect(secondIds.length).toBe(2);
    expect(secondIds[secondIds.length - 1]).toBe(image);
    expect(new Set([...firstIds, ...secondIds]).size).toBe(52);
    expect(second.text).not.toContain(">Older<");
    expect(second.text).toContain(">Newest<");
  });
});

describe("request detail", () => {
  test("a completed image: input, timeline, price, an <img> of a signed same-origin link that downloads", async () => {
    const p = await b.page(`/console/requests/${image}`);
    expect(p.status).toBe(200);
    expect(p.text).toContain(image);
    // The input, pretty-printed and escaped.
    expect(p.text).toContain("&quot;prompt&quot;: &quot;a &lt;b&gt;cat&lt;/b&gt;&quot;");
    expect(p.text).not.toContain("<b>cat</b>");
    expect(p.text).toMatch(
      /<strong>submitted<\/strong>[\s\S]*<strong>started<\/strong>[\s\S]*<strong>COMPLETED<\/strong>/,
    );
    expect(p.text).toMatch(/<dt>Quoted<\/dt><dd>0\.01 USD/);
    expect(p.text).toMatch(/<dt>Reserved<\/dt><dd>0\.01 USD/);
    expect(p.text).toMatch(/<dt>Charged<\/dt><dd>0\.01 USD/);
    // Units counted in words: one image, never "(1 images)"; the speech's seconds in the plural.
    expect(p.text).toContain('<span class="hint">(1 image)</span>');
    expect(p.text).not.toMatch(/\((?!1 )\d+ image\)|\(1 images\)/);
    const sp = await b.page(`/console/requests/${speech}`);
    expect(sp.text).toMatch(/<span class="hint">\(\d+ seconds\)<\/span>/);
    const img = /<img src="([^"]+)" alt="Output 1 of sandbox\/image"/.exec(p.text);
    expect(img).not.toBeNull();
    const url = new URL(img![1]!.replaceAll("&amp;", "&"));
    expect(url.origin).toBe("http://gengate.test"); // the public URL: same origin as the page
    expect(url.pathname).toMatch(new RegExp(`^/v1/requests/${image}/output/0$`));
    expect(url.searchParams.get("sig")).toBeTruthy();
    const res = await c.request(url.pathname + url.search, { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("image/png");
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
  });

  test("audio and video outputs get <audio controls> / <video controls>", async () => {
    const p = await b.page(`/console/requests/${speech}`);
    expect(p.status).toBe(200);
    expect(p.text).toMatch(/<audio controls preload="metadata" src="http:\/\/gengate\.test\/v1\/requests\//);
  });

  test("a failed request: its error and 'nothing was charged'", async () => {
    const p = await b.page(`/console/requests/${failed}`);
    expect(p.status).toBe(200);
    expect(p.text).toContain("This request failed");
    expect(p.text).toContain("Nothing was charged");
    expect(p.text).toMatch(/<dt>Charged<\/dt><dd>0\.00 USD/);
    expect(p.text).not.toContain("<h2>Outputs</h2>");
  });

  test("an unknown or malformed id: 404 page", async () => {
    expect((await b.page("/console/requests/01900000-0000-7000-8000-000000000000")).status).toBe(404);
    expect((await b.page("/console/requests/not-an-id")).status).toBe(404);
  });
});
