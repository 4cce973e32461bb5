import { describe, expect, test } from "bun:test";
import { countRows } from "../helpers/backend.ts";
import { studioSetup } from "../studio/helpers.ts";

/** What app.js sends: the reply as a stream (the form without script gets a page). */
const STREAM = { headers: { accept: "text/event-stream" } };

type Setup = Awaited<ReturnType<typeof studioSetup>>;

const jobs = (s: Setup) => countRows(s.ctx.sql, "jobs");

const costOf = (text: string) =>
  JSON.parse(/event: cost\ndata: (.*)\n\n$/.exec(text)![1]!) as {
    request_id: string;
    charged_micro: string;
    total_micro: string;
  };

const ask = { model_id: "sandbox/chat", messages: JSON.stringify([{ role: "user", content: "hello" }]) };

describe("studio chat: security", () => {
  test("the chat POST needs our Origin and the session's CSRF token; nothing is opened or charged otherwise", async () => {
    const s = await studioSetup();
    const b = await s.signedIn("ann@example.com");
    await b.page("/console/studio?model=sandbox/chat");
    const before = await s.available();
    expect(
      (await b.post("/console/studio/chat", ask, { ...STREAM, origin: "https://evil.example" })).status,
    ).toBe(403);
    expect((await b.post("/console/studio/chat", ask, { ...STREAM, origin: null })).status).toBe(403);
    expect((await b.post("/console/studio/chat", ask, { ...STREAM, csrf: null })).status).toBe(403);
    expect((await b.post("/console/studio/chat", ask, { ...STREAM, csrf: "wrong-token" })).status).toBe(403);
    expect(await jobs(s)).toBe(0);
    expect(await s.available()).toBe(before);
    const ok = await b.post("/console/studio/chat", ask, STREAM);
    expect(ok.status).toBe(200);
    await ok.text();
    expect(await jobs(s)).toBe(1);
  });

  test("signed out (even with an API key): 303 to sign-in, nothing opened", async () => {
    const s = await studioSetup();
    const anon = s.browser();
    const res = await anon.post("/console/studio/chat", ask, {
      csrf: null,
      headers: { ...STREAM.headers, authorization: `Key ${s.key}` },
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/console/login");
    expect(await jobs(s)).toBe(0);
  });

  test("bad input is the API's JSON error and opens nothing: a media model, bad messages JSON, no message", async () => {
    const s = await studioSetup();
    const b = await s.signedIn("ann@example.com");
    await b.page("/console/studio?model=sandbox/chat");
    const cases: Record<string, string>[] = [
      { model_id: "sandbox/image", messages: ask.messages },
      { model_id: "nope/none", messages: ask.messages },
      { model_id: "sandbox/chat", messages: "[not json" },
      { model_id: "sandbox/chat", messages: JSON.stringify({ role: "user" }) },
      { model_id: "sandbox/chat" },
      { model_id: "", messages: ask.messages },
    ];
    for (const fields of cases) {
      const res = await b.post("/console/studio/chat", fields, STREAM);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.message.length).toBeGreaterThan(0);
    }
    expect(await jobs(s)).toBe(0);
  });

  test("an empty balance is 402 and nothing is charged", async () => {
    const s = await studioSetup(0n);
    const b = await s.signedIn("ann@example.com");
    await b.page("/console/studio?model=sandbox/chat");
    const res = await b.post("/console/studio/chat", ask, STREAM);
    expect(res.status).toBe(402);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("insufficient_balance");
  });

  test("another account's or another person's replies never count in a conversation's total", async () => {
    const s = await studioSetup();
    await s.ctx.ledger.topUp(s.otherAccountId, 1_000_000n, null);
    const ann = await s.signedIn("ann@example.com");
    await ann.page("/console/studio?model=sandbox/chat");
    const annCost = costOf(await (await ann.post("/console/studio/chat", ask, STREAM)).text());
    expect(BigInt(annCost.charged_micro)).toBeGreaterThan(0n);

    for (const email of ["eve@example.com", "bob@example.com"]) {
      const other = await s.signedIn(email);
      await other.page("/console/studio?model=sandbox/chat");
      const res = await other.post(
        "/console/studio/chat",
        { ...ask, conversation: annCost.request_id },
        STREAM,
      );
      const cost = costOf(await res.text());
      expect(cost.total_micro).toBe(cost.charged_micro);
    }
    // And Ann's run is a 404 page for Eve (the run pages' own scoping).
    const eve = await s.signedIn("eve@example.com");
    expect((await eve.page(`/console/studio/runs/${annCost.request_id}`)).status).toBe(404);
  });
});
