import { describe, expect, test } from "bun:test";
import { formatMoney } from "../../src/console/format.ts";
import { studioSetup } from "../studio/helpers.ts";

/** What app.js sends: the reply as a stream (the form without script gets a page). */
const STREAM = { headers: { accept: "text/event-stream" } };

type Setup = Awaited<ReturnType<typeof studioSetup>>;

async function ann(s: Setup) {
  const b = await s.signedIn("ann@example.com");
  await b.page("/console/studio?model=sandbox/chat");
  return b;
}

/** The SSE events of a body: [name, data] in order. */
function events(text: string): [string, string][] {
  return text
    .split("\n\n")
    .filter((b) => b.trim())
    .map((b) => {
      let name = "message";
      let data = "";
      for (const line of b.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        if (line.startsWith("data:")) data += line.slice(5).trim();
      }
      return [name, data];
    });
}

function replyOf(ev: [string, string][]): string {
  return ev
    .filter(([n, d]) => n === "message" && d !== "[DONE]")
    .map(
      ([, d]) =>
        (JSON.parse(d) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? "",
    )
    .join("");
}

const costOf = (ev: [string, string][]) =>
  JSON.parse(ev.find(([n]) => n === "cost")![1]) as {
    request_id: string;
    currency: string;
    charged_micro: string;
    charged: string;
    total_micro: string;
    total: string;
  };

describe("studio chat", () => {
  test("a text model's studio page shows the chat view (Message, Send), not Run", async () => {
    const s = await studioSetup();
    const b = await ann(s);
    const page = await b.page("/console/studio?model=sandbox/chat");
    expect(page.text).toContain("data-chat");
    expect(page.text).toContain('<label for="studio-chat-message">Message</label>');
    expect(page.text).toContain('<button type="submit">Send</button>');
    expect(page.text).not.toContain('<button type="submit">Run</button>');
    const image = await b.page("/console/studio?model=sandbox/image");
    expect(image.text).not.toContain("data-chat-form");
    expect(image.text).toContain('<button type="submit">Run</button>');
  });

  test("POST /console/studio/chat streams the reply, then its cost from the ledger and the conversation's total", async () => {
    const s = await studioSetup();
    const b = await ann(s);
    const before = await s.available();
    const res = await b.post(
      "/console/studio/chat",
      {
        model_id: "sandbox/chat",
        messages: JSON.stringify([{ role: "user", content: "Hello there, studio" }]),
      },
      STREAM,
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const ev = events(await res.text());
    expect(replyOf(ev).length).toBeGreaterThan(0);
    expect(ev.some(([, d]) => d === "[DONE]")).toBe(true);
    expect(ev[ev.length - 1]![0]).toBe("cost");
    const cost = costOf(ev);
    const job = (await s.ctx.jobs.get(cost.request_id))!;
    expect(job).toMatchObject({
      source: "STUDIO",
      key_id: null,
      person_id: s.ann.personId,
      status: "COMPLETED",
    });
    const row = (await s.ctx.sql.get<{ charged_micro: bigint }>(
      "SELECT charged_micro FROM holds WHERE id = ?",
      [job.hold_id],
    ))!;
    expect(BigInt(cost.charged_micro)).toBe(BigInt(row.charged_micro));
    expect(BigInt(cost.charged_micro)).toBeGreaterThan(0n);
    expect(before - (await s.available())).toBe(BigInt(cost.charged_micro));
    expect(cost.charged).toBe(formatMoney(BigInt(cost.charged_micro), "USD"));
    expect(cost.total_micro).toBe(cost.charged_micro);

    // The second reply: its own cost, and the total of both (the server's sum, from the ledger).
    const res2 = await b.post(
      "/console/studio/chat",
      {
        model_id: "sandbox/chat",
        messages: JSON.stringify([
          { role: "user", content: "Hello there, studio" },
          { role: "assistant", content: replyOf(ev) },
          { role: "user", content: "And again, a little longer this time" },
        ]),
        conversation: cost.request_id,
      },
      STREAM,
    );
    const cost2 = costOf(events(await res2.text()));
    expect(cost2.request_id).not.toBe(cost.request_id);
    expect(BigInt(cost2.total_micro)).toBe(BigInt(cost.charged_micro) + BigInt(cost2.charged_micro));
    expect(before - (await s.available())).toBe(BigInt(cost2.total_micro));
    // The wallet lists STUDIO charges equal to the costs shown.
    const wallet = await b.page("/console/wallet");
    expect(wallet.text).toContain("STUDIO");
  });

  test("the form without the script: a page with the reply and its cost, the ledger's charge", async () => {
    const s = await studioSetup();
    const b = await ann(s);
    const before = await s.available();
    // The page's own form: `messages` is the (empty) conversation so far, `message` the new one.
    const res = await b.post("/console/studio/chat", {
      model_id: "sandbox/chat",
      messages: "[]",
      message: "hi",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const text = await res.text();
    expect(text).toContain("<h1>Studio chat</h1>");
    expect(text).toContain('<p class="chat-text">hi</p>');
    expect(text).toContain("This is the gengate sandbox chat model");
    const charged = before - (await s.available());
    expect(charged).toBeGreaterThan(0n);
    expect(text).toContain(`Cost: ${formatMoney(charged, "USD")}`);
    // An error without the script is the console's error page, not JSON; nothing is charged.
    const bad = await b.post("/console/studio/chat", {
      model_id: "sandbox/chat",
      messages: "[]",
      message: "",
    });
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toContain("text/html");
    expect(await s.available()).toBe(before - charged);
  });
});

/** The Estimate element's amount (micro) in a partial or page, or null when it shows none. */
function estimateOf(markup: string): bigint | null {
  const m = /<output id="studio-estimate"[^>]*>\s*<data value="(-?\d+)"/.exec(markup);
  return m ? BigInt(m[1]!) : null;
}

describe("the chat's Estimate", () => {
  const HX = { headers: { "hx-request": "true" } };

  test("a text model's page has the Estimate of the next reply, no token-count fields, no Run", async () => {
    const s = await studioSetup();
    const b = await ann(s);
    const page = (await b.page("/console/studio?model=sandbox/chat")).text;
    expect(page).toContain('<span id="studio-estimate-label">Estimate</span>');
    expect(page).toContain("type a message");
    expect(page).not.toContain("input_tokens");
    expect(page).not.toContain('id="studio-form"');
  });

  test("it equals POST /v1/estimate for the tokens held, and the hold the reply then places", async () => {
    const s = await studioSetup();
    const b = await ann(s);
    const history = [
      { role: "user", content: "Hello there, studio" },
      { role: "assistant", content: "Hello! How can I help?" },
    ];
    const short = await b.post(
      "/console/studio/chat/estimate",
      { model_id: "sandbox/chat", messages: "[]", message: "Tell me about foxes" },
      HX,
    );
    expect(short.status).toBe(200);
    const shortText = await short.text();
    expect(shortText).not.toContain("<html");
    const tokens = /(\d+) prompt tokens and up to (\d+) reply tokens/.exec(shortText)!;
    const api = await s.request("/v1/estimate", {
      method: "POST",
      key: s.key,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model_id: "sandbox/chat",
        input: { input_tokens: Number(tokens[1]), output_tokens: Number(tokens[2]) },
      }),
    });
    const shown = estimateOf(shortText)!;
    expect(shown).toBe(BigInt(((await api.json()) as { price_usd_micro: string }).price_usd_micro));

    // A longer conversation holds more: the estimate follows what is sent.
    const long = await b.post(
      "/console/studio/chat/estimate",
      { model_id: "sandbox/chat", messages: JSON.stringify(history), message: "Tell me about foxes" },
      HX,
    );
    const longShown = estimateOf(await long.text())!;
    expect(longShown).toBeGreaterThan(shown);

    // Sending exactly that conversation holds exactly the estimate (then charges at most that).
    const sent = await b.post(
      "/console/studio/chat",
      {
        model_id: "sandbox/chat",
        messages: JSON.stringify([...history, { role: "user", content: "Tell me about foxes" }]),
      },
      STREAM,
    );
    const cost = costOf(events(await sent.text()));
    const hold = (await s.ctx.sql.get<{ amount_micro: bigint; charged_micro: bigint }>(
      "SELECT amount_micro, charged_micro FROM holds WHERE id = ?",
      [(await s.ctx.jobs.get(cost.request_id))!.hold_id],
    ))!;
    expect(BigInt(hold.amount_micro)).toBe(longShown);
    expect(BigInt(hold.charged_micro)).toBeLessThanOrEqual(longShown);
  });

  test("nothing typed: no amount; bad history: its message, never a 500", async () => {
    const s = await studioSetup();
    const b = await ann(s);
    const empty = await b.post(
      "/console/studio/chat/estimate",
      { model_id: "sandbox/chat", messages: "[]", message: "  " },
      HX,
    );
    expect(estimateOf(await empty.text())).toBeNull();
    for (const fields of [
      { model_id: "sandbox/chat", messages: "[not json", message: "x" },
      { model_id: "sandbox/chat", messages: JSON.stringify({ role: "user" }), message: "x" },
      { model_id: "sandbox/image", messages: "[]", message: "x" },
      { model_id: "", messages: "[]", message: "x" },
      { model_id: "sandbox/chat", messages: JSON.stringify([{ role: "wizard", content: 1 }]), message: "x" },
    ]) {
      const res = await b.post("/console/studio/chat/estimate", fields, HX);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(estimateOf(text)).toBeNull();
      expect(text).toContain('class="field-error" role="alert"');
    }
  });
});
