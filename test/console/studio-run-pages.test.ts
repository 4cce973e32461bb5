import { afterEach, describe, expect, test } from "bun:test";
import { waitForFinal } from "../../src/queue/submit.ts";
import type { WorkerPool } from "../../src/queue/workers.ts";
import { countRows } from "../helpers/backend.ts";
import { studioSetup } from "../studio/helpers.ts";

let pool: WorkerPool | null = null;
afterEach(async () => {
  await pool?.stop(1000);
  pool = null;
});

/** Ann signed in, with the CSRF token of a page. */
async function ann(s: Awaited<ReturnType<typeof studioSetup>>) {
  const b = await s.signedIn("ann@example.com");
  await b.page("/console");
  return b;
}

const runIdOf = (res: Response) =>
  /\/console\/studio\/runs\/([0-9a-f-]{36})$/.exec(res.headers.get("location") ?? "")![1]!;

describe("studio run pages", () => {
  test("the studio page's own form runs: its fields are read by parseStudioForm; a bad field comes back next to it", async () => {
    const s = await studioSetup();
    const b = await ann(s);
    const page = await b.page("/console/studio?model=sandbox/image");
    expect(page.text).toContain('action="/console/studio/run"');
    const ok = await b.post("/console/studio/run", {
      model_id: "sandbox/image",
      prompt: "a cat",
      num_images: "3",
    });
    expect(ok.status).toBe(303);
    const job = (await s.ctx.jobs.get(runIdOf(ok)))!;
    expect(job.source).toBe("STUDIO");
    expect(JSON.parse(job.input)).toMatchObject({ prompt: "a cat", num_images: 3 });

    const jobsBefore = await countRows(s.ctx.sql, "jobs");
    const bad = await b.post("/console/studio/run", {
      model_id: "sandbox/image",
      prompt: "a cat",
      num_images: "99",
    });
    expect(bad.status).toBe(400);
    const text = await bad.text();
    expect(text).toContain('aria-invalid="true"');
    expect(text).toContain("must be &lt;= 4");
    expect(text).toContain('value="99"');
    expect(await countRows(s.ctx.sql, "jobs")).toBe(jobsBefore);
  });

  test("Run opens a STUDIO job and leads to its page, which shows progress, then the images in place", async () => {
    const s = await studioSetup();
    const b = await ann(s);
    const res = await b.post("/console/studio/run", {
      model_id: "sandbox/image",
      input: JSON.stringify({ prompt: "a cat", num_images: 2 }),
    });
    expect(res.status).toBe(303);
    const id = runIdOf(res);
    const job = (await s.ctx.jobs.get(id))!;
    expect(job).toMatchObject({
      source: "STUDIO",
      key_id: null,
      person_id: s.ann.personId,
      status: "IN_QUEUE",
    });

    const queued = await b.page(`/console/studio/runs/${id}`);
    expect(queued.status).toBe(200);
    expect(queued.text).toContain(`data-run-events="/console/studio/runs/${id}/events"`);
    expect(queued.text).toContain("IN_QUEUE");
    expect(queued.text).toContain("Jobs ahead");
    expect(queued.text).not.toContain("<script>");

    pool = s.workers();
    await waitForFinal(s.ctx, id, 30_000);
    const done = await b.page(`/console/studio/runs/${id}`);
    expect(done.text).toContain("COMPLETED");
    expect(done.text).not.toContain("data-run-events");
    const imgs = [...done.text.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1]!.replaceAll("&amp;", "&"));
    expect(imgs).toHaveLength(2);
    expect(done.text.match(/download>Download output/g)).toHaveLength(2);
    // The links are fresh signed links that download the image without a session.
    const img = await s.app.handle(new Request(imgs[0]!.replace("http://gengate.test", "http://localhost")));
    expect(img.status).toBe(200);
    expect(img.headers.get("content-type")).toBe("image/png");
    // Charged exactly the estimate (2 images).
    expect(done.text).toContain('<data value="20000">');
  });

  test("results are shown by their content type: audio gets a player, the sandbox's video (WebM) a video player", async () => {
    const s = await studioSetup();
    const b = await ann(s);
    pool = s.workers();
    const speech = runIdOf(
      await b.post("/console/studio/run", {
        model_id: "sandbox/speech",
        input: '{"text": "hi", "duration": 1}',
      }),
    );
    await waitForFinal(s.ctx, speech, 30_000);
    expect((await b.page(`/console/studio/runs/${speech}`)).text).toMatch(/<audio controls[^>]* src="[^"]+"/);
    const video = runIdOf(
      await b.post("/console/studio/run", {
        model_id: "sandbox/video",
        input: '{"prompt": "waves", "duration": 1, "resolution": "480p"}',
      }),
    );
    await waitForFinal(s.ctx, video, 30_000);
    // The sandbox's video model delivers video/webm (src/providers/sandbox): a video/* output gets
    // <video controls> (preview() of requests-view.ts, shared).
    expect((await b.page(`/console/studio/runs/${video}`)).text).toMatch(
      /<video controls[^>]* src="[^"]+" aria-label="Output 1 of sandbox\/video"/,
    );
  });

  test("a failed run shows the error and that nothing was charged", async () => {
    const s = await studioSetup();
    const b = await ann(s);
    const id = runIdOf(
      await b.post("/console/studio/run", {
        model_id: "sandbox/image",
        input: JSON.stringify({ prompt: "x", sandbox: { fail: true } }),
      }),
    );
    pool = s.workers();
    await waitForFinal(s.ctx, id, 30_000);
    const page = await b.page(`/console/studio/runs/${id}`);
    expect(page.text).toContain("The run failed");
    expect(page.text).toContain("The sandbox was asked to fail this job");
    expect(page.text).toContain("Nothing was charged");
    expect(page.text).toContain('<data value="0">');
    expect(await s.available()).toBe(10_000_000n);
  });

  test("the status stream: the API's status events with logs, closed after the final state", async () => {
    const s = await studioSetup();
    const b = await ann(s);
    const id = runIdOf(
      await b.post("/console/studio/run", { model_id: "sandbox/image", input: '{"prompt":"x"}' }),
    );
    const res = await b.get(`/console/studio/runs/${id}/events`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
    // The first status event is read before any worker runs (the run is still queued); then the
    // stream goes on until the run is final. (Reading it all after starting the workers would race
    // them for the first event: on PostgreSQL the claim often comes first.)
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!/^event: status\ndata: .*\n/m.test(text)) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
    pool = s.workers();
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
    const events = [...text.matchAll(/^event: status\ndata: (.*)$/gm)].map(
      (m) => JSON.parse(m[1]!) as { status: string; request_id: string; logs: { message: string }[] },
    );
    expect(events[0]!.status).toBe("IN_QUEUE");
    expect(events.at(-1)!.status).toBe("COMPLETED");
    expect(events.at(-1)!.request_id).toBe(id);
    expect(events.at(-1)!.logs.some((l) => l.message.includes("sandbox: produced"))).toBe(true);
  });

  test("the model's errors come back as pages with the API's status; nothing is opened", async () => {
    const s = await studioSetup(15_000n);
    const b = await ann(s);
    const tooMany = await b.post("/console/studio/run", {
      model_id: "sandbox/image",
      input: '{"prompt":"x","num_images":5}',
    });
    expect(tooMany.status).toBe(400);
    expect(await tooMany.text()).toContain("num_images");
    const poor = await b.post("/console/studio/run", {
      model_id: "sandbox/image",
      input: '{"prompt":"x","num_images":2}',
    });
    expect(poor.status).toBe(402);
    expect(await poor.text()).toContain("/console/billing");
    expect(
      (await b.post("/console/studio/run", { model_id: "sandbox/image", input: "{not json" })).status,
    ).toBe(400);
    expect((await b.post("/console/studio/run", { model_id: "", input: "{}" })).status).toBe(400);
    expect((await b.post("/console/studio/run", { model_id: "sandbox/nope", input: "{}" })).status).toBe(400);
    expect(await countRows(s.ctx.sql, "jobs")).toBe(0);
  });

  test("a refused run stays on the studio with what was typed and the reason inline (a 402 links billing)", async () => {
    const s = await studioSetup(15_000n);
    const b = await ann(s);
    const poor = await b.post("/console/studio/run", {
      model_id: "sandbox/image",
      prompt: "a red fox",
      num_images: "2",
    });
    expect(poor.status).toBe(402);
    const text = await poor.text();
    expect(text).toContain('id="studio-form"');
    expect(text).toContain(">a red fox</textarea>");
    expect(text).toContain('value="2"');
    expect(text).toMatch(
      /id="studio-refusal"[^>]*>Not run, nothing was charged: .*<a href="\/console\/billing">/,
    );
    expect(text).not.toContain("That did not work");
    // An upscale given a web address instead of an upload: refused, the address kept next to its field.
    const upscale = await b.post("/console/studio/run", {
      model_id: "sandbox/upscale",
      image_url: "https://example.com/cat.png",
    });
    expect(upscale.status).toBe(400);
    const up = await upscale.text();
    expect(up).toMatch(
      /id="studio-refusal"[^>]*>Not run, nothing was charged: The source image size is unknown/,
    );
    expect(up).toContain('value="https://example.com/cat.png"');
    expect(await countRows(s.ctx.sql, "jobs")).toBe(0);
  });

  test("the per-person cap: a third open run is a 429 page", async () => {
    const s = await studioSetup();
    const b = await ann(s);
    for (const p of ["1", "2"])
      expect(
        (await b.post("/console/studio/run", { model_id: "sandbox/image", input: `{"prompt":"${p}"}` }))
          .status,
      ).toBe(303);
    const third = await b.post("/console/studio/run", { model_id: "sandbox/image", input: '{"prompt":"3"}' });
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toBe("1");
    // Bob, in the same account, still can.
    const bob = await s.signedIn("bob@example.com");
    await bob.page("/console");
    expect(
      (await bob.post("/console/studio/run", { model_id: "sandbox/image", input: '{"prompt":"b"}' })).status,
    ).toBe(303);
  });
});
