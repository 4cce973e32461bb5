import { describe, expect, test } from "bun:test";
import { studioRun } from "../../src/studio/service.ts";
import { countRows } from "../helpers/backend.ts";
import { studioSetup } from "../studio/helpers.ts";

const jobs = (s: Awaited<ReturnType<typeof studioSetup>>) => countRows(s.ctx.sql, "jobs");

describe("studio run pages: security", () => {
  test("the run POST needs our Origin and the session's CSRF token; nothing is opened otherwise", async () => {
    const s = await studioSetup();
    const b = await s.signedIn("ann@example.com");
    await b.page("/console");
    const fields = { model_id: "sandbox/image", input: '{"prompt":"x"}' };
    expect((await b.post("/console/studio/run", fields, { origin: "https://evil.example" })).status).toBe(
      403,
    );
    expect((await b.post("/console/studio/run", fields, { origin: null })).status).toBe(403);
    expect((await b.post("/console/studio/run", fields, { csrf: null })).status).toBe(403);
    expect((await b.post("/console/studio/run", fields, { csrf: "wrong-token" })).status).toBe(403);
    expect(await jobs(s)).toBe(0);
    expect((await b.post("/console/studio/run", fields)).status).toBe(303);
    expect(await jobs(s)).toBe(1);
  });

  test("signed out: the POST opens nothing and the pages send to sign-in; an API key is not a session", async () => {
    const s = await studioSetup();
    const run = await studioRun(s.ctx, s.ann, "sandbox/image", { prompt: "x" });
    const anon = s.browser();
    const post = await anon.post(
      "/console/studio/run",
      { model_id: "sandbox/image", input: "{}" },
      { csrf: null },
    );
    expect(post.status).toBe(303);
    expect(post.headers.get("location")).toBe("/console/login");
    for (const path of [`/console/studio/runs/${run.id}`, `/console/studio/runs/${run.id}/events`]) {
      const res = await anon.get(path, { authorization: `Key ${s.key}` });
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toStartWith("/console/login");
    }
    expect(await jobs(s)).toBe(1);
  });

  test("another account's run, its stream and unknown ids are 404 pages", async () => {
    const s = await studioSetup();
    const run = await studioRun(s.ctx, s.ann, "sandbox/image", { prompt: "private" });
    const eve = await s.signedIn("eve@example.com");
    for (const path of [
      `/console/studio/runs/${run.id}`,
      `/console/studio/runs/${run.id}/events`,
      "/console/studio/runs/00000000-0000-7000-8000-000000000000",
      "/console/studio/runs/not-a-uuid",
    ]) {
      const res = await eve.page(path);
      expect(res.status).toBe(404);
      expect(res.text).not.toContain("private");
      expect(res.res.headers.get("content-type")).toContain("text/html");
    }
    // A member of the same account sees it (runs are the account's, like its requests).
    const bob = await s.signedIn("bob@example.com");
    expect((await bob.page(`/console/studio/runs/${run.id}`)).status).toBe(200);
  });

  test("the run page escapes what the run carries and has no inline script", async () => {
    const s = await studioSetup();
    const run = await studioRun(s.ctx, s.ann, "sandbox/image", { prompt: "<script>alert(1)</script>" });
    await s.ctx.jobs.fail(run.id, "generation_failed", "<img src=x onerror=alert(1)>", Date.now());
    const b = await s.signedIn("ann@example.com");
    const page = await b.page(`/console/studio/runs/${run.id}`);
    expect(page.text).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(page.text).not.toContain("<img src=x");
    expect(page.text).not.toMatch(/<script>(?!<\/script>)/);
  });
});
