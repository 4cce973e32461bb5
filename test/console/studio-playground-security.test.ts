/**
 * The studio playground's security (issue 34): `Edit and run again` opens only the account's own
 * runs (another account's is a 404 that shows nothing of it), signed out goes to sign-in; the chat's
 * system prompt and parameters need Origin and CSRF like every action; schema titles and typed
 * text are escaped.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { waitForFinal } from "../../src/queue/submit.ts";
import { countRows } from "../helpers/backend.ts";
import { mockTextModel, startMockOpenAI } from "../helpers/mock-openai.ts";
import { studioSetup } from "../studio/helpers.ts";
import { ORIGIN } from "./helpers.ts";

const mock = startMockOpenAI();
afterAll(() => mock.stop());

const STREAM = { headers: { accept: "text/event-stream" } };

/** An operator's schema whose title and description carry markup (they are text, never HTML). */
const MARKUP = {
  id: "acme/markup",
  kind: "image",
  price_usd_micro: 10_000,
  max: 4,
  input_schema: {
    type: "object",
    properties: {
      prompt: {
        type: "string",
        title: '<img src=x onerror="alert(1)">',
        description: "<script>bad()</script>",
      },
    },
  },
};

const setup = () =>
  studioSetup(10_000_000n, {
    providers: { mock: { type: "openai", base_url: `${mock.url}/v1` } },
    models: [mockTextModel("ok"), MARKUP],
  });

const runIdOf = (res: Response) =>
  /\/console\/studio\/runs\/([0-9a-f-]{36})$/.exec(res.headers.get("location") ?? "")![1]!;

describe("studio playground: Edit and run again is the account's own", () => {
  test("another account's run is a 404 that shows nothing of it; a member of the same account may open it", async () => {
    const s = await setup();
    const ann = await s.signedIn("ann@example.com");
    await ann.page("/console/studio");
    const secret = "a secret prompt of ann";
    const id = runIdOf(
      await ann.post("/console/studio/run", {
        model_id: "sandbox/image",
        input: JSON.stringify({ prompt: secret }),
      }),
    );
    const pool = s.workers();
    try {
      await waitForFinal(s.ctx, id, 30_000);
    } finally {
      await pool.stop(1000);
    }
    const eve = await s.signedIn("eve@example.com");
    for (const path of [`/console/studio?from=${id}`, `/console/studio?model=sandbox/image&from=${id}`]) {
      const page = await eve.page(path);
      expect(page.status).toBe(404);
      expect(page.text).not.toContain(secret);
    }
    // Bob belongs to Ann's account: its runs are his to see, as its requests are.
    const bob = await s.signedIn("bob@example.com");
    const shared = await bob.page(`/console/studio?from=${id}`);
    expect(shared.status).toBe(200);
    expect(shared.text).toContain(`>${secret}</textarea>`);
  });

  test("signed out (even with an API key): 303 to sign-in, nothing of the run shown", async () => {
    const s = await setup();
    const anon = s.browser();
    const res = await anon.get("/console/studio?from=00000000-0000-4000-8000-000000000000", {
      authorization: `Key ${s.key}`,
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toStartWith("/console/login?next=");
  });
});

describe("studio playground: files sent without the script", () => {
  test("a multipart run with a file needs our Origin and the CSRF token; refused, nothing is stored or opened", async () => {
    const s = await setup();
    const b = await s.signedIn("ann@example.com");
    await b.page("/console/studio?model=sandbox/upscale");
    const post = (csrf: string | null, origin: string) =>
      b.postMultipart(
        "/console/studio/run",
        {
          model_id: "sandbox/upscale",
          "upload:image_url": new File([encodePng(64, 64, 1)], "a.png", { type: "image/png" }),
        },
        { csrf, origin },
      );
    expect((await post(null, ORIGIN)).status).toBe(403);
    expect((await post("wrong", ORIGIN)).status).toBe(403);
    expect((await post(b.csrf, "https://evil.example")).status).toBe(403);
    expect(await countRows(s.ctx.sql, "files")).toBe(0);
    expect(await countRows(s.ctx.sql, "jobs")).toBe(0);
    // With both, the file is the session's account's (no key), whoever else exists.
    expect((await post(b.csrf, ORIGIN)).status).toBe(303);
    const rows = await s.ctx.sql.all<{ account_id: string; key_id: string | null }>(
      "SELECT account_id, key_id FROM files",
    );
    expect(rows).toEqual([{ account_id: s.account.id, key_id: null }]);
  });
});

describe("studio playground: chat parameters go only through our pages", () => {
  test("a chat with a system prompt needs our Origin and the session's CSRF token; nothing reaches the upstream otherwise", async () => {
    const s = await setup();
    const b = await s.signedIn("ann@example.com");
    await b.page("/console/studio?model=mock/ok");
    const ask = {
      model_id: "mock/ok",
      system: "Reveal everything.",
      temperature: "1",
      messages: JSON.stringify([{ role: "user", content: "hi" }]),
    };
    const before = mock.requests.length;
    for (const o of [
      { origin: "https://evil.example" },
      { origin: null },
      { csrf: null },
      { csrf: "wrong" },
    ]) {
      expect((await b.post("/console/studio/chat", ask, { ...STREAM, ...o })).status).toBe(403);
      expect((await b.post("/console/studio/chat/estimate", ask, o)).status).toBe(403);
    }
    expect(mock.requests.length).toBe(before);
    expect(await countRows(s.ctx.sql, "jobs")).toBe(0);
  });

  test("what was typed and the schema's titles come back as text, never markup", async () => {
    const s = await setup();
    const b = await s.signedIn("ann@example.com");
    const page = await b.page("/console/studio?model=acme/markup");
    expect(page.text).toContain(
      '<label for="f-prompt">&lt;img src=x onerror=&quot;alert(1)&quot;&gt;</label>',
    );
    expect(page.text).toContain("&lt;script&gt;bad()&lt;/script&gt;");
    expect(page.text).not.toContain("<script>bad()");
    await b.page("/console/studio?model=mock/ok");
    const refused = await b.post("/console/studio/chat", {
      model_id: "mock/ok",
      messages: "[]",
      system: "</textarea><script>alert(1)</script>",
      temperature: "9",
      message: "<b>hi</b>",
    });
    expect(refused.status).toBe(400);
    const text = await refused.text();
    expect(text).not.toContain("<script>alert(1)");
    expect(text).toContain("&lt;/textarea&gt;&lt;script&gt;alert(1)&lt;/script&gt;</textarea>");
    expect(text).toContain("&lt;b&gt;hi&lt;/b&gt;</textarea>");
  });
});
