import { describe, expect, test } from "bun:test";
import { formatMoney } from "../../src/console/format.ts";
import { studioSetup } from "../studio/helpers.ts";

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
    const before = s.available();
    const res = await b.post("/console/studio/chat", {
      model_id: "sandbox/chat",
      messages: JSON.stringify([{ role: "user", content: "Hello there, studio" }]),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const ev = events(await res.text());
    expect(replyOf(ev).length).toBeGreaterThan(0);
    expect(ev.some(([, d]) => d === "[DONE]")).toBe(true);
    expect(ev[ev.length - 1]![0]).toBe("cost");
    const cost = costOf(ev);
    const job = s.ctx.jobs.get(cost.request_id)!;
    expect(job).toMatchObject({
      source: "STUDIO",
      key_id: null,
      person_id: s.ann.personId,
      status: "COMPLETED",
    });
    const row = s.db.query("SELECT charged_micro FROM holds WHERE id = ?").get(job.hold_id) as {
      charged_micro: bigint;
    };
    expect(BigInt(cost.charged_micro)).toBe(BigInt(row.charged_micro));
    expect(BigInt(cost.charged_micro)).toBeGreaterThan(0n);
    expect(before - s.available()).toBe(BigInt(cost.charged_micro));
    expect(cost.charged).toBe(formatMoney(BigInt(cost.charged_micro), "USD"));
    expect(cost.total_micro).toBe(cost.charged_micro);

    // The second reply: its own cost, and the total of both (the server's sum, from the ledger).
    const res2 = await b.post("/console/studio/chat", {
      model_id: "sandbox/chat",
      messages: JSON.stringify([
        { role: "user", content: "Hello there, studio" },
        { role: "assistant", content: replyOf(ev) },
        { role: "user", content: "And again, a little longer this time" },
      ]),
      conversation: cost.request_id,
    });
    const cost2 = costOf(events(await res2.text()));
    expect(cost2.request_id).not.toBe(cost.request_id);
    expect(BigInt(cost2.total_micro)).toBe(BigInt(cost.charged_micro) + BigInt(cost2.charged_micro));
    expect(before - s.available()).toBe(BigInt(cost2.total_micro));
    // The wallet lists STUDIO charges equal to the costs shown.
    const wallet = await b.page("/console/wallet");
    expect(wallet.text).toContain("STUDIO");
  });

  test("a single `message` field (the form without the script) is a one-message conversation", async () => {
    const s = await studioSetup();
    const b = await ann(s);
    const res = await b.post("/console/studio/chat", { model_id: "sandbox/chat", message: "hi" });
    expect(res.status).toBe(200);
    expect(costOf(events(await res.text())).request_id).toMatch(/^[0-9a-f-]{36}$/);
  });
});
