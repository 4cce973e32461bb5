// The requests list as an activity log (happy paths): badges, durations, the figures over the
// filter on a seeded set of known durations and failures, the exact-id and date filters with
// paging, the live refresh's partials and `Cancel request` from the list and from a request's page.
import { describe, expect, test } from "bun:test";
import { seedJob } from "../queue/seed-jobs.ts";
import { consoleApp } from "./helpers.ts";

const c = await consoleApp();
const { ctx } = c;
await ctx.ledger.topUp(c.account.id, 100_000_000n, null);
const DAY = Date.UTC(2026, 10, 20);
const H = 3_600_000;
const seed = (j: Parameters<typeof seedJob>[2]) => seedJob(ctx, c.account.id, { keyId: c.keyId, ...j });

// 2026-11-20: durations 1, 2, 3, 4, 10 s succeeded; 5, 20 s failed; one cancelled; one queued.
const c1 = await seed({ createdAt: DAY, status: "COMPLETED", queuedMs: 200, runMs: 800 });
await seed({ createdAt: DAY + H, status: "COMPLETED", queuedMs: 500, runMs: 1500 });
await seed({ createdAt: DAY + 2 * H, status: "COMPLETED", queuedMs: 0, runMs: 3000 });
await seed({ createdAt: DAY + 3 * H, status: "COMPLETED", queuedMs: 1000, runMs: 3000 });
await seed({ createdAt: DAY + 4 * H, status: "COMPLETED", queuedMs: 4000, runMs: 6000 });
await seed({ createdAt: DAY + 5 * H, status: "FAILED", queuedMs: 1000, runMs: 4000 });
const f20 = await seed({
  createdAt: DAY + 24 * H - 1,
  status: "FAILED",
  queuedMs: 5000,
  runMs: 125_000 - 5000,
});
await seed({ createdAt: DAY + 6 * H, status: "CANCELLED", cancelAfterMs: 700 });
const queuedOld = await seed({ createdAt: DAY + 7 * H, status: "IN_QUEUE" });
// The next day, outside the filter: one more failure.
await seed({ createdAt: DAY + 24 * H, status: "FAILED", queuedMs: 1, runMs: 1 });

await c.person("owner@example.com");
await c.person("member@example.com", "member");
const b = await c.signedIn("owner@example.com");

const rowIds = (text: string) => [...text.matchAll(/<tr id="request-([0-9a-f-]{36})"/g)].map((m) => m[1]);
const day = "from=2026-11-20&to=2026-11-20";

describe("the list as an activity log", () => {
  test("figures over the filtered period: requests, error rate with its counts, p50 and p95", async () => {
    const p = await b.page(`/console/requests?${day}`);
    expect(p.status).toBe(200);
    expect(rowIds(p.text).length).toBe(9);
    expect(p.text).toContain('<h2 id="request-stats-title">2026-11-20 (UTC)</h2>');
    expect(p.text).toContain("Whole UTC days, 2026-11-20 to 2026-11-20 (both included)");
    const week = await b.page("/console/requests?from=2026-11-14&to=2026-11-20");
    expect(week.text).toContain('<h2 id="request-stats-title">2026-11-14 to 2026-11-20 (UTC)</h2>');
    const long = await b.page("/console/requests?from=2026-01-01&to=2026-11-20");
    expect(long.text).toContain(
      '<h2 id="request-stats-title">2026-10-21 to 2026-11-20 (UTC): the last 31 days of the range</h2>',
    );
    expect(long.text).toContain('<dd data-stat="requests">9</dd>');
    const toOnly = await b.page("/console/requests?to=2026-11-20");
    expect(toOnly.text).toContain(
      '<h2 id="request-stats-title">2026-10-21 to 2026-11-20 (UTC): the last 31 days of the range</h2>',
    );
    const open = await b.page("/console/requests");
    expect(open.text).toContain('<h2 id="request-stats-title">Last 31 days (UTC, today included)</h2>');
    expect(p.text).toContain('<dd data-stat="requests">9</dd>');
    // 2 failed of 7 finished = 28.571...%; the cancelled and the queued one are in neither.
    expect(p.text).toMatch(/data-stat="error-rate">28\.6 % <span[^>]*>2 failed of 7 finished</);
    // Sorted durations 1, 2, 3, 4, 5, 10, 125 s: p50 the 4th, p95 the 7th, each shown as its
    // latency bucket's bound: 4.096 s and 2^17 ms = 131.072 s.
    expect(p.text).toContain('<dd data-stat="p50">about 4 s</dd>');
    expect(p.text).toContain('<dd data-stat="p95">about 2 min 11 s</dd>');
  });

  test("each status is a badge in words; Duration with its queued and running times", async () => {
    const p = await b.page(`/console/requests?${day}`);
    for (const [status, word] of <[string, string][]>[
      ["COMPLETED", "Succeeded"],
      ["FAILED", "Failed"],
      ["CANCELLED", "Cancelled"],
      ["IN_QUEUE", "Queued"],
    ])
      expect(p.text).toContain(
        `<span class="status status-${status.toLowerCase()}" data-status="${status}">${word}</span>`,
      );
    const row = (id: string) => new RegExp(`<tr id="request-${id}"[\\s\\S]*?</tr>`).exec(p.text)![0];
    expect(row(c1)).toMatch(
      /<td data-label="Duration">1 s\s*<span class="hint duration-parts">queued 200 ms, running 800 ms</,
    );
    expect(row(f20)).toMatch(
      /<td data-label="Duration">2 min 5 s\s*<span class="hint duration-parts">queued 5 s, running 2 min</,
    );
    // A queued row: its time so far, never started, and its Cancel request button.
    expect(row(queuedOld)).toMatch(
      /<td data-label="Duration">[^<]+<span class="hint">so far<\/span>\s*<span class="hint duration-parts">queued [^<,]+<\/span>/,
    );
    expect(row(queuedOld)).toContain(`action="/console/requests/${queuedOld}/cancel"`);
    expect(row(queuedOld)).toContain(">Cancel request</button>");
    expect(row(c1)).not.toContain("Cancel request");
  });

  test("Request id goes straight to the account's request (any case, spaces around)", async () => {
    const res = await b.get(`/console/requests?id=${encodeURIComponent(` ${f20.toUpperCase()} `)}`);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/console/requests/${f20}`);
  });

  test("a date range keeps paging: Older carries From and To, every request of the range once", async () => {
    const OTHER = Date.UTC(2026, 10, 10);
    const made = new Set<string>();
    for (let i = 0; i < 52; i++)
      made.add(await seed({ createdAt: OTHER + i * 60_000, status: "COMPLETED", queuedMs: 10, runMs: 10 }));
    await seed({ createdAt: OTHER - 1, status: "COMPLETED" }); // 2026-11-09, outside
    const first = await b.page("/console/requests?from=2026-11-10&to=2026-11-10");
    expect(first.text).toContain('name="from" value="2026-11-10"');
    expect(first.text).toContain('name="to" value="2026-11-10"');
    const older =
      /href="(\/console\/requests\?from=2026-11-10&amp;to=2026-11-10&amp;cursor=[0-9a-f-]+)">Older</.exec(
        first.text,
      );
    expect(older).not.toBeNull();
    const second = await b.page(older![1]!.replaceAll("&amp;", "&"));
    const seen = [...rowIds(first.text), ...rowIds(second.text)];
    expect(seen.length).toBe(52);
    expect(new Set(seen)).toEqual(made);
    expect(second.text).not.toContain(">Older<");
    expect(second.text).toContain('data-stat="requests">52<');
  });
});

describe("live refresh", () => {
  test("a page with open rows polls their ids every 2 s; one without open rows does not", async () => {
    const p = await b.page(`/console/requests?${day}`);
    const poller =
      /<div id="requests-live" hidden hx-get="([^"]+)" hx-trigger="every 2s" hx-swap="outerHTML">/.exec(
        p.text,
      );
    expect(poller).not.toBeNull();
    const url = new URL(poller![1]!.replaceAll("&amp;", "&"), "http://x");
    expect(url.pathname).toBe("/console/requests/live");
    expect(url.searchParams.get("ids")).toBe(queuedOld);
    expect(url.searchParams.get("back")).toBe(`/console/requests?${day}`);
    const done = await b.page("/console/requests?status=COMPLETED");
    expect(done.text).toContain('<div id="requests-live" hidden></div>');
    expect(done.text).not.toContain("every 2s");
  });

  test("the partial re-renders only the rows asked for, swapped in by id; polling stops once none is live", async () => {
    const live = await b.page(`/console/requests/live?ids=${queuedOld},${c1}&back=%2Fconsole%2Frequests`);
    expect(live.status).toBe(200);
    expect(live.text).toContain(`<tr id="request-${queuedOld}" hx-swap-oob="true" data-live>`);
    expect(live.text).toContain(`<tr id="request-${c1}" hx-swap-oob="true">`);
    expect(live.text).toContain('hx-trigger="every 2s"');
    expect(live.text).toContain(`ids=${queuedOld}&amp;back=`); // only the live one is asked again
    expect(live.text).not.toContain("<html");
    const final = await b.page(`/console/requests/live?ids=${c1}`);
    expect(final.text).toContain('<div id="requests-live" hidden></div>');
    expect(final.text).not.toContain("hx-trigger");
  });

  test("a request's page refreshes its status and durations; once final, the page reloads", async () => {
    const running = await seed({ createdAt: Date.now() - 3000, status: "IN_PROGRESS", queuedMs: 1000 });
    const p = await b.page(`/console/requests/${running}`);
    expect(p.text).toContain(`hx-get="/console/requests/${running}/live" hx-trigger="every 2s"`);
    expect(p.text).toMatch(/<dt>Duration<\/dt><dd>\d+(\.\d)? s so far<\/dd>/);
    expect(p.text).toMatch(/<dt>Queued<\/dt><dd>1 s<\/dd>/);
    expect(p.text).toContain('data-status="IN_PROGRESS">Running</span>');
    expect(p.text).not.toContain(">Cancel request</button>"); // running: not cancellable
    const live = await b.get(`/console/requests/${running}/live`);
    expect(live.status).toBe(200);
    expect(live.headers.get("hx-refresh")).toBeNull();
    expect(await ctx.jobs.complete(running, {}, [], 1000n, null, 60_000, Date.now())).toBe(true);
    const final = await b.get(`/console/requests/${running}/live`);
    expect(final.headers.get("hx-refresh")).toBe("true");
    expect(await final.text()).not.toContain("hx-trigger");
  });
});

describe("Cancel request", () => {
  test("from the list: 303 back to the same filtered list with a notice; the hold is released", async () => {
    const id = await seed({ createdAt: Date.now(), status: "IN_QUEUE" });
    const before = await ctx.accounts.getAccount(c.account.id);
    await b.page("/console/requests?status=IN_QUEUE");
    const res = await b.post(`/console/requests/${id}/cancel`, { back: "/console/requests?status=IN_QUEUE" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(
      `/console/requests?status=IN_QUEUE&notice=cancelled&request=${id}`,
    );
    expect((await ctx.jobs.get(id))!.status).toBe("CANCELLED");
    const after = await ctx.accounts.getAccount(c.account.id);
    expect(after!.balance_micro).toBe(before!.balance_micro);
    expect(after!.held_micro).toBe(before!.held_micro - 1000n);
    const hold = await ctx.ledger.getHold((await ctx.jobs.get(id))!.hold_id);
    expect(hold!.status).toBe("released");
    const page = await b.page(res.headers.get("location")!);
    expect(page.text).toContain(`Request <span class="mono">${id}</span> was cancelled. Nothing was charged`);
    expect(page.text).toContain('<option value="IN_QUEUE" selected>');
  });

  test("from a request's page, by a member of the account: back to that page", async () => {
    const id = await seed({ createdAt: Date.now(), status: "IN_QUEUE" });
    const m = await c.signedIn("member@example.com");
    const p = await m.page(`/console/requests/${id}`);
    expect(p.text).toContain(`action="/console/requests/${id}/cancel"`);
    expect(p.text).toContain("<dt>Running</dt><dd>Not started</dd>");
    const res = await m.post(`/console/requests/${id}/cancel`, { back: `/console/requests/${id}` });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/console/requests/${id}?notice=cancelled&request=${id}`);
    const after = await m.page(res.headers.get("location")!);
    expect(after.text).toContain('data-status="CANCELLED">Cancelled</span>');
    expect(after.text).toContain("Nothing was charged");
    expect(after.text).not.toContain(">Cancel request</button>");
  });
});
