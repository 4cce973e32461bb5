import { describe, expect, test } from "bun:test";
import { parseStudioForm, renderStudioFields } from "../../src/studio/form.ts";
import { formOf, sampleInput } from "../studio/form-fixtures.ts";
import { consoleApp, PASSWORD } from "./helpers.ts";

/** A console app with a signed-in owner of the default account (funded) and a RUB account's member. */
async function setup() {
  const c = await consoleApp();
  await c.ctx.ledger.topUp(c.account.id, 5_000_000n, "studio tests");
  await c.person("owner@example.com", "owner");
  const owner = await c.signedIn("owner@example.com");
  await owner.page("/console/studio");
  return c;
}

type App = Awaited<ReturnType<typeof setup>>;

/** POST /v1/estimate with a key. */
async function apiEstimate(c: App, key: string, model_id: string, input: Record<string, unknown>) {
  const res = await c.request("/v1/estimate", {
    method: "POST",
    key,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model_id, input }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

/** The estimate box's figures: the Estimate element's <data value>, and the whole partial. */
function estimateOf(markup: string): string | null {
  const m =
    /<output id="studio-estimate" aria-labelledby="studio-estimate-label"[^>]*>\s*<data value="(-?\d+)"/.exec(
      markup,
    );
  return m ? m[1]! : null;
}

describe("GET /console/studio", () => {
  test("Model select grouped by kind with price and max; the chosen model's form; Estimate; Run; Code", async () => {
    const c = await setup();
    const b = await c.signedIn("owner@example.com");
    const { status, text } = await b.page("/console/studio?model=sandbox/video");
    expect(status).toBe(200);
    expect(text).toContain('<label for="studio-model">Model</label>');
    for (const group of ["Image", "Video", "Avatar", "Upscale", "Audio", "Text (chat)"])
      expect(text).toContain(`<optgroup label="${group}">`);
    expect(text).toContain(
      '<option value="sandbox/video" selected>sandbox/video (0.02 USD to 0.08 USD per second, max 10)</option>',
    );
    expect(text).toContain("sandbox/image (0.01 USD per image, max 4)");
    expect(text).toContain("sandbox/chat (0.50 USD per 1M input tokens, 1.50 USD per 1M output tokens)");
    expect(text).toContain('<label for="f-prompt">Prompt</label>');
    expect(text).toContain('<span id="studio-estimate-label">Estimate</span>');
    // The default video (5 s at the lowest... no tier given: the model's default tier) is priced at once.
    const api = await apiEstimate(c, c.key, "sandbox/video", {});
    expect(estimateOf(text)).toBe(api.body.price_usd_micro!);
    expect(text).toContain('<button type="submit">Run</button>');
    expect(text).toContain('action="/console/studio/run"');
    expect(text).toContain('<h2 id="studio-code-title">Code</h2>');
    expect(text).toContain("/v1/queue/sandbox/video");
    expect(text).toMatch(/<output id="studio-available"[^>]*><data value="5000000">/);
  });

  test("without ?model the first image model; an unknown model is a 404 page", async () => {
    const c = await setup();
    const b = await c.signedIn("owner@example.com");
    expect((await b.page("/console/studio")).text).toContain('<option value="sandbox/image" selected>');
    const missing = await b.page("/console/studio?model=acme/nope");
    expect(missing.status).toBe(404);
  });

  test("every sandbox model's page renders, and a posted form comes back with the same values", async () => {
    const c = await setup();
    const b = await c.signedIn("owner@example.com");
    for (const model of c.ctx.catalog.models) {
      const page = await b.page(`/console/studio?model=${model.id}`);
      expect(page.status).toBe(200);
      // A text model's page is the chat (studio-chat.test.ts), not a form of token counts.
      if (model.kind === "text") continue;
      // Without JS, `Update estimate` posts the form and gets the whole page back, values kept.
      const input = sampleInput(model);
      const fields = formOf(renderStudioFields(model, { values: input }).value);
      const res = await b.post("/console/studio/estimate", {
        model_id: model.id,
        ...Object.fromEntries(fields),
      });
      expect(res.status).toBe(200);
      const again = formOf(pageForm(await res.text()));
      expect(again.get("model_id")).toBe(model.id);
      expect(await parseStudioForm(model, again)).toEqual({ ok: true, input });
    }
  });
});

/** The page's form fields (csrf, model_id and the model's fields). */
function pageForm(text: string): string {
  return text.slice(
    text.indexOf('<form id="studio-form"'),
    text.indexOf("</form>", text.indexOf('<form id="studio-form"')),
  );
}

describe("the Estimate partial equals POST /v1/estimate", () => {
  const cases: [string, Record<string, string>, Record<string, unknown>][] = [
    ["sandbox/image", { num_images: "3", prompt: "fox" }, { num_images: 3, prompt: "fox" }],
    ["sandbox/image", {}, {}],
    ["sandbox/video", { resolution: "1080p", duration: "7" }, { resolution: "1080p", duration: 7 }],
    ["sandbox/speech", { text: "hi", duration: "33" }, { text: "hi", duration: 33 }],
    [
      "sandbox/upscale",
      { image_url: "https://example.com/a.png", width: "1000", height: "700", scale: "3" },
      { image_url: "https://example.com/a.png", width: 1000, height: 700, scale: 3 },
    ],
  ];

  test("USD account", async () => {
    const c = await setup();
    const b = await c.signedIn("owner@example.com");
    await b.page("/console/studio");
    for (const [model_id, fields, input] of cases) {
      const res = await b.post(
        "/console/studio/estimate",
        { model_id, ...fields },
        { headers: { "hx-request": "true" } },
      );
      expect(res.status).toBe(200);
      const partial = await res.text();
      const api = await apiEstimate(c, c.key, model_id, input);
      expect(api.status).toBe(200);
      expect(estimateOf(partial)).toBe(api.body.price_usd_micro!);
      expect(partial).toContain('id="studio-code" aria-labelledby="studio-code-title" hx-swap-oob="true"');
      expect(partial).not.toContain("<html");
    }
  });

  test("RUB account: the RUB price at the current rate, as /v1/estimate's price_rub_micro", async () => {
    const c = await setup();
    await c.ctx.fx.set("RUB", 92_500_000n, "cli");
    const rub = await c.ctx.accounts.createAccount("Moscow Lab", "RUB");
    await c.ctx.ledger.topUp(rub.account.id, 1_000_000_000n, "studio tests");
    const { url } = await c.people.invites.createInvite({
      email: "ivan@example.com",
      accountId: rub.account.id,
      role: "member",
    });
    await c.people.signIn.acceptInvite(url.split("/").pop()!, PASSWORD, { ip: null, userAgent: null });
    const b = await c.signedIn("ivan@example.com");
    const page = await b.page("/console/studio");
    expect(page.text).toMatch(/<output id="studio-available"[^>]*><data value="1000000000">[^<]*RUB/);
    for (const [model_id, fields, input] of cases) {
      const res = await b.post(
        "/console/studio/estimate",
        { model_id, ...fields },
        { headers: { "hx-request": "true" } },
      );
      const partial = await res.text();
      const api = await apiEstimate(c, rub.key, model_id, input);
      expect(api.body.currency).toBe("RUB");
      expect(estimateOf(partial)).toBe(api.body.price_rub_micro!);
      expect(partial).toMatch(/<output id="studio-estimate"[^>]*>\s*<data value="\d+">[^<]* RUB</);
    }
  });

  test("an input the engine refuses: its message instead of a price; bad text names the field", async () => {
    const c = await setup();
    const b = await c.signedIn("owner@example.com");
    await b.page("/console/studio");
    const hx = { headers: { "hx-request": "true" } };
    const over = await (
      await b.post("/console/studio/estimate", { model_id: "sandbox/image", num_images: "9" }, hx)
    ).text();
    const api = await apiEstimate(c, c.key, "sandbox/image", { num_images: 9 });
    expect(api.status).toBe(400);
    expect(estimateOf(over)).toBeNull();
    expect(over).toContain(
      `<p class="field-error" role="alert">${(api.body as unknown as { error: { message: string } }).error.message}</p>`,
    );
    const typed = await (
      await b.post("/console/studio/estimate", { model_id: "sandbox/image", num_images: "two" }, hx)
    ).text();
    expect(typed).toContain("num_images: must be a whole number");
    // Without htmx: the whole page, the field's error next to it and the typed text kept.
    const page = await b.post("/console/studio/estimate", { model_id: "sandbox/image", num_images: "two" });
    const text = await page.text();
    expect(text).toContain('<span class="field-error" id="f-num_images-error">must be a whole number</span>');
    expect(text).toMatch(/name="num_images"[^>]*value="two"/);
    // ...and the estimate box gives the reason, not the price of the other fields (never stale).
    expect(estimateOf(text)).toBeNull();
    expect(text).toContain('<p class="field-error" role="alert">num_images: must be a whole number</p>');
  });

  test("an unknown model_id is a 400 page", async () => {
    const c = await setup();
    const b = await c.signedIn("owner@example.com");
    await b.page("/console/studio");
    const res = await b.post("/console/studio/estimate", { model_id: "acme/nope" });
    expect(res.status).toBe(400);
  });
});
