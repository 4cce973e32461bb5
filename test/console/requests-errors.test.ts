// The requests pages' refusals: bad dates, a malformed or unknown request id, a cancel the job no
// longer allows (already running or finished: back on the page with an inline message, nothing
// changed), a tampered return address, too many live ids. Never a 500.
import { describe, expect, test } from "bun:test";
import { seedJob } from "../queue/seed-jobs.ts";
import { consoleApp } from "./helpers.ts";

const c = await consoleApp();
const { ctx } = c;
await ctx.ledger.topUp(c.account.id, 100_000_000n, null);
const seed = (j: Parameters<typeof seedJob>[2]) => seedJob(ctx, c.account.id, { keyId: c.keyId, ...j });
await c.person("owner@example.com");
const b = await c.signedIn("owner@example.com");

describe("filters refused", () => {
  test("dates that are not dates, or To before From: 400 with the message and the form", async () => {
    for (const [q, message] of <[string, string][]>[
      ["from=2026-13-01", "from must be a date, YYYY-MM-DD (UTC)."],
      ["to=2026-02-30", "to must be a date, YYYY-MM-DD (UTC)."],
      ["from=yesterday", "from must be a date"],
      ["from=1999-12-31", "from must be a date"],
      ["from=2026-11-20&to=2026-11-19", "To must be on or after From."],
      [`from=${"9".repeat(400)}`, "from must be a date"],
    ]) {
      const p = await b.page(`/console/requests?${q}`);
      expect(`${q}: ${p.status}`).toBe(`${q}: 400`);
      expect(p.text).toContain('role="alert"');
      expect(p.text).toContain(message);
      expect(p.text).toContain('<form class="filters"');
      expect(p.text).not.toContain('data-stat="requests"');
    }
    // The same day as both ends is a range of one day.
    expect((await b.page("/console/requests?from=2026-11-20&to=2026-11-20")).status).toBe(200);
  });

  test("a malformed request id: 400; an unknown one: 404 'not found' with the id kept to correct", async () => {
    const bad = await b.page("/console/requests?id=not-a-uuid");
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("A request id is a UUID");
    const unknown = "01900000-0000-7000-8000-000000000000";
    const p = await b.page(`/console/requests?id=${unknown}`);
    expect(p.status).toBe(404);
    expect(p.text).toContain(`No request ${unknown} in this account.`);
    expect(p.text).toContain(`name="id" value="${unknown}"`);
    expect(p.text).not.toContain("<table");
  });
});

describe("Cancel request refused", () => {
  test("already running: back on the page with an inline message; the job and its hold unchanged", async () => {
    const id = await seed({ createdAt: Date.now() - 2000, status: "IN_PROGRESS", queuedMs: 1000 });
    await b.page(`/console/requests/${id}`);
    const res = await b.post(`/console/requests/${id}/cancel`, { back: `/console/requests/${id}` });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(
      `/console/requests/${id}?notice=not-cancellable&request=${id}&now=IN_PROGRESS`,
    );
    const job = (await ctx.jobs.get(id))!;
    expect(job.status).toBe("IN_PROGRESS");
    expect((await ctx.ledger.getHold(job.hold_id))!.status).toBe("open");
    const page = await b.page(res.headers.get("location")!);
    expect(page.status).toBe(200);
    expect(page.text).toContain(
      `<div class="notice error" role="alert"><p>Request <span class="mono">${id}</span> was not cancelled: it is already running. Only a queued request can be cancelled.</p></div>`,
    );
  });

  test("already finished, from the list: the list again with the message", async () => {
    const id = await seed({ createdAt: Date.now() - 2000, status: "COMPLETED", queuedMs: 10, runMs: 10 });
    await b.page("/console/requests");
    const res = await b.post(`/console/requests/${id}/cancel`, { back: "/console/requests?source=API" });
    expect(res.headers.get("location")).toBe(
      `/console/requests?source=API&notice=not-cancellable&request=${id}&now=COMPLETED`,
    );
    const page = await b.page(res.headers.get("location")!);
    expect(page.text).toContain("was not cancelled: it has already succeeded.");
    expect((await ctx.jobs.get(id))!.status).toBe("COMPLETED");
  });

  test("a return address elsewhere is ignored: back to the list", async () => {
    const id = await seed({ createdAt: Date.now(), status: "IN_QUEUE" });
    await b.page("/console/requests");
    for (const back of [
      "https://evil.example/",
      "//evil.example",
      "/console/keys",
      "/console/requests/../keys",
    ]) {
      const id2 = await seed({ createdAt: Date.now(), status: "IN_QUEUE" });
      const res = await b.post(`/console/requests/${id2}/cancel`, { back });
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe(`/console/requests?notice=cancelled&request=${id2}`);
    }
    const res = await b.post(`/console/requests/${id}/cancel`, {});
    expect(res.headers.get("location")).toBe(`/console/requests?notice=cancelled&request=${id}`);
  });

  test("a malformed id: 400 page; an unknown one: 404 page", async () => {
    await b.page("/console/requests");
    expect((await b.post("/console/requests/nope/cancel", {})).status).toBe(400);
    expect((await b.post("/console/requests/01900000-0000-7000-8000-000000000000/cancel", {})).status).toBe(
      404,
    );
  });

  test("a notice in the URL shows only from the fixed list, with a checked id", async () => {
    const p = await b.page("/console/requests?notice=%3Cscript%3E&request=x");
    expect(p.status).toBe(200);
    expect(p.text).not.toContain("was cancelled");
    const q = await b.page("/console/requests?notice=cancelled&request=%3Cb%3Ehi");
    expect(q.text).not.toContain("<b>hi");
    expect(q.text).not.toContain("was cancelled");
  });
});

describe("live partials refused", () => {
  test("more than 100 ids: 400; malformed ids are left out", async () => {
    const ids = Array.from({ length: 101 }, () => Bun.randomUUIDv7()).join(",");
    expect((await b.page(`/console/requests/live?ids=${ids}`)).status).toBe(400);
    const p = await b.page("/console/requests/live?ids=nope,%3Cscript%3E");
    expect(p.status).toBe(200);
    expect(p.text).not.toContain("<tr");
    expect(p.text).not.toContain("<script>");
    expect((await b.page("/console/requests/nope/live")).status).toBe(404);
  });
});
