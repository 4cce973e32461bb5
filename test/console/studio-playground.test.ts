/**
 * The studio as a playground (issue 34): labels and help from the model's input_schema, `Edit and
 * run again` with the run's own input, the run's own input in the code, and the chat's system
 * prompt and parameters reaching the upstream. Errors: studio-playground-errors.test.ts; other
 * accounts, CSRF: studio-playground-security.test.ts.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { encodePng } from "../../src/providers/sandbox/media/index.ts";
import { waitForFinal } from "../../src/queue/submit.ts";
import type { WorkerPool } from "../../src/queue/workers.ts";
import { mockTextModel, startMockOpenAI } from "../helpers/mock-openai.ts";
import { studioSetup } from "../studio/helpers.ts";

const mock = startMockOpenAI();
afterAll(() => mock.stop());
let pool: WorkerPool | null = null;
afterEach(async () => {
  await pool?.stop(1000);
  pool = null;
});

/** An operator's model whose schema has titles on some fields and none on others. */
const TITLED = {
  id: "acme/titled",
  kind: "image",
  price_usd_micro: 10_000,
  max: 4,
  input_schema: {
    type: "object",
    additionalProperties: false,
    required: ["prompt"],
    properties: {
      prompt: { type: "string", title: "Describe the picture", description: "What to draw, in words." },
      num_images: { type: "integer", minimum: 1, maximum: 4, default: 1 },
      guidance_scale: { type: "number", title: "Guidance", minimum: 0, maximum: 20 },
      image_url: { type: "string", description: "A picture to start from." },
    },
  },
};

const setup = () =>
  studioSetup(10_000_000n, {
    providers: { mock: { type: "openai", base_url: `${mock.url}/v1` } },
    models: [TITLED, mockTextModel("ok")],
  });
type Setup = Awaited<ReturnType<typeof setup>>;

async function ann(s: Setup) {
  const b = await s.signedIn("ann@example.com");
  await b.page("/console/studio");
  return b;
}

const runIdOf = (res: Response) =>
  /\/console\/studio\/runs\/([0-9a-f-]{36})$/.exec(res.headers.get("location") ?? "")![1]!;

/** The curl tab's JSON body (`-d '...'`), as the page shows it. */
function curlBody(page: string): unknown {
  const code = /<code id="code-curl">([\s\S]*?)<\/code>/.exec(page)![1]!.replaceAll("&#39;", "'");
  const body = /-d '([^']*)'/.exec(code.replaceAll("&quot;", '"').replaceAll("&amp;", "&"))![1]!;
  return JSON.parse(body);
}

describe("studio playground: the form", () => {
  test("labels are the schema's titles, else the input name as words; descriptions are help tied by aria-describedby", async () => {
    const s = await setup();
    const b = await ann(s);
    const { status, text } = await b.page("/console/studio?model=acme/titled");
    expect(status).toBe(200);
    expect(text).toContain('<label for="f-prompt">Describe the picture</label>');
    expect(text).toContain('<span class="hint" id="f-prompt-hint">What to draw, in words. Required.</span>');
    expect(text).toMatch(/<textarea id="f-prompt" name="prompt"[^>]* aria-describedby="f-prompt-hint"/);
    expect(text).toContain('<label for="f-guidance_scale">Guidance</label>');
    // No title: the name made readable, never the raw snake_case; bounds and default in the help.
    expect(text).toContain('<label for="f-num_images">Num images</label>');
    expect(text).toContain('<span class="hint" id="f-num_images-hint">1 to 4. Default 1.</span>');
    expect(text).toMatch(
      /<input id="f-num_images" name="num_images"[^>]* aria-describedby="f-num_images-hint"/,
    );
    expect(text).toContain('<label for="f-image_url">Image URL</label>');
    expect(text).not.toMatch(/<label[^>]*>[a-z]+_[a-z_]+<\/label>/);
    // The drop zone: a file input labelled after the field, a preview holder, the URL field kept.
    expect(text).toContain(
      '<div class="drop-zone" data-drop-zone><label class="hint" for="f-image_url-file">Upload a file for Image URL</label>',
    );
    expect(text).toContain('data-upload-preview="f-image_url-preview"');
    // Form and result side by side: the playground's two columns.
    expect(text).toMatch(/<div class="playground">\s*<div class="playground-form"><form id="studio-form"/);
    expect(text).toContain('<section id="studio-result" class="playground-result"');
  });
});

describe("studio playground: Edit and run again", () => {
  test("a finished run offers it; it opens the form with the run's own input, and every snippet shows that input", async () => {
    const s = await setup();
    const b = await ann(s);
    const input = { prompt: "a red fox", num_images: 2, seed: 7 };
    const id = runIdOf(
      await b.post("/console/studio/run", { model_id: "sandbox/image", input: JSON.stringify(input) }),
    );
    const open = await b.page(`/console/studio/runs/${id}`);
    expect(open.text).not.toContain("Edit and run again"); // offered once it has finished
    pool = s.workers();
    await waitForFinal(s.ctx, id, 30_000);

    const run = await b.page(`/console/studio/runs/${id}`);
    expect(run.text).toContain(`<a class="button" href="/console/studio?from=${id}">Edit and run again</a>`);
    // The run's input beside its result, labelled as the form labels it.
    expect(run.text).toContain('<dt>Num images</dt><dd class="wrap-anywhere">2</dd>');
    // The run page's code is this run's own input, not the form's defaults.
    expect(curlBody(run.text)).toEqual(input);
    // The JavaScript and Python tabs too (the fal, Replicate, fal-client arguments).
    expect(run.text.match(/&quot;num_images&quot;: 2/g)?.length ?? 0).toBeGreaterThanOrEqual(3);
    expect(run.text.match(/&quot;seed&quot;: 7/g)?.length ?? 0).toBeGreaterThanOrEqual(3);

    const edit = await b.page(`/console/studio?from=${id}`);
    expect(edit.status).toBe(200);
    expect(edit.text).toContain('<option value="sandbox/image" selected>');
    expect(edit.text).toMatch(/<textarea id="f-prompt" name="prompt"[^>]*>a red fox<\/textarea>/);
    expect(edit.text).toMatch(/<input id="f-num_images" name="num_images"[^>]* value="2"/);
    expect(edit.text).toMatch(/<input id="f-seed" name="seed"[^>]* value="7"/);
    expect(curlBody(edit.text)).toEqual(input);
    // The run being edited keeps its result beside the form.
    expect(edit.text).toContain(`<a href="/console/studio/runs/${id}">completed</a>`);
    const result = /<section id="studio-result"[\s\S]*?<\/section>/.exec(edit.text)![0];
    expect(result.match(/<img src="/g)).toHaveLength(2);
    // Its estimate is the run's (2 images at 0.01).
    expect(edit.text).toMatch(/<output id="studio-estimate"[^>]*><data value="20000">/);
  });

  test("a file input comes back as its file id; the run page lists it under the field's label", async () => {
    const s = await setup();
    const b = await ann(s);
    const page = await b.page("/console/studio?model=sandbox/upscale");
    expect(page.status).toBe(200);
    const png = encodePng(64, 64, 1);
    const up = await s.handle("/console/studio/upload", {
      method: "POST",
      body: png,
      headers: {
        cookie: `gengate_session=${b.cookie}`,
        origin: "http://gengate.test",
        "content-type": "image/png",
        "x-csrf-token": b.csrf!,
      },
    });
    expect(up.status).toBe(201);
    const fileId = ((await up.json()) as { file_id: string }).file_id;
    const id = runIdOf(
      await b.post("/console/studio/run", {
        model_id: "sandbox/upscale",
        input: JSON.stringify({ image_url: fileId, scale: 2 }),
      }),
    );
    pool = s.workers();
    await waitForFinal(s.ctx, id, 30_000);
    expect((await b.page(`/console/studio/runs/${id}`)).text).toContain(
      `<dt>Image URL</dt><dd class="wrap-anywhere">${fileId}</dd>`,
    );
    const edit = await b.page(`/console/studio?from=${id}`);
    expect(edit.text).toMatch(new RegExp(`<input id="f-image_url" name="image_url"[^>]* value="${fileId}"`));
  });
});

describe("studio playground: files without the script", () => {
  test("the form is multipart: a chosen file is stored with Run (a file of the account) and its id is the input", async () => {
    const s = await setup();
    const b = await ann(s);
    const page = await b.page("/console/studio?model=sandbox/upscale");
    expect(page.text).toContain('enctype="multipart/form-data"');
    expect(page.text).toContain('name="upload:image_url" type="file"');
    const res = await b.postMultipart("/console/studio/run", {
      model_id: "sandbox/upscale",
      image_url: "",
      scale: "2",
      "upload:image_url": new File([encodePng(64, 48, 2)], "photo.png", { type: "image/png" }),
    });
    expect(res.status).toBe(303);
    const job = (await s.ctx.jobs.get(runIdOf(res)))!;
    const input = JSON.parse(job.input) as { image_url: string; scale: number };
    expect(input.image_url).toMatch(/^file_/);
    expect(input.scale).toBe(2);
    const file = (await s.ctx.files.getLive(input.image_url, s.account.id))!;
    expect([file.content_type, file.key_id]).toEqual(["image/png", null]);
  });

  test("Update estimate without the script stores the file and keeps its id in the field", async () => {
    const s = await setup();
    const b = await ann(s);
    await b.page("/console/studio?model=sandbox/upscale");
    const res = await b.postMultipart("/console/studio/estimate", {
      model_id: "sandbox/upscale",
      "upload:image_url": new File([encodePng(200, 100, 2)], "photo.png", { type: "image/png" }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const id = /<input id="f-image_url" name="image_url"[^>]* value="(file_[0-9A-Za-z]+)"/.exec(text)?.[1];
    expect(id).toBeDefined();
    // Priced from the stored file's measured size, as /v1/estimate prices a file id.
    expect(text).toContain("megapixel");
  });
});

describe("studio playground: chat", () => {
  test("the system prompt and the parameters reach the upstream with the conversation", async () => {
    const s = await setup();
    const b = await ann(s);
    const page = await b.page("/console/studio?model=mock/ok");
    expect(page.text).toContain('<label for="studio-chat-system">System prompt</label>');
    expect(page.text).toContain('<label for="studio-chat-temperature">Temperature</label>');
    expect(page.text).toContain('<label for="studio-chat-max_tokens">Max tokens</label>');
    // Bounded as the API and the model bound them: temperature 0..2, max tokens 1..context.
    expect(page.text).toMatch(/name="temperature" type="number"[^>]* min="0" max="2"/);
    expect(page.text).toMatch(/name="max_tokens" type="number"[^>]* min="1" max="8192"/);
    const before = mock.requests.length;
    const res = await b.post(
      "/console/studio/chat",
      {
        model_id: "mock/ok",
        system: "Answer like a pirate.",
        temperature: "0.3",
        max_tokens: "64",
        messages: JSON.stringify([{ role: "user", content: "Hello" }]),
      },
      { headers: { accept: "text/event-stream" } },
    );
    expect(res.status).toBe(200);
    await res.text();
    const sent = mock.requests.slice(before);
    expect(sent).toHaveLength(1);
    const body = sent[0]!.body;
    expect(body.messages).toEqual([
      { role: "system", content: "Answer like a pirate." },
      { role: "user", content: "Hello" },
    ]);
    expect(body.temperature).toBe(0.3);
    expect(body.max_tokens ?? body.max_completion_tokens).toBe(64);
  });

  test("the chat's code follows the form: its system prompt, conversation, message and parameters (htmx, out of band)", async () => {
    const s = await setup();
    const b = await ann(s);
    const page = await b.page("/console/studio?model=mock/ok");
    expect(curlBody(page.text)).toEqual({
      model: "mock/ok",
      messages: [{ role: "user", content: "Hello!" }],
    });
    const res = await b.post("/console/studio/chat/estimate", {
      model_id: "mock/ok",
      system: "Answer like a pirate.",
      temperature: "0.7",
      max_tokens: "128",
      messages: JSON.stringify([
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Ahoy." },
      ]),
      message: "Where is the treasure?",
    });
    const text = await res.text();
    expect(text).toContain(
      '<section id="studio-code" aria-labelledby="studio-code-title" hx-swap-oob="true">',
    );
    expect(curlBody(text)).toEqual({
      model: "mock/ok",
      messages: [
        { role: "system", content: "Answer like a pirate." },
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Ahoy." },
        { role: "user", content: "Where is the treasure?" },
      ],
      temperature: 0.7,
      max_tokens: 128,
    });
  });

  test("the Estimate counts the system prompt and holds max_tokens", async () => {
    const s = await setup();
    const b = await ann(s);
    await b.page("/console/studio?model=mock/ok");
    const estimate = async (fields: Record<string, string>) => {
      const res = await b.post("/console/studio/chat/estimate", {
        model_id: "mock/ok",
        messages: "[]",
        message: "Hello",
        ...fields,
      });
      const text = await res.text();
      return /(\d+) prompt tokens and up to (\d+) reply tokens/.exec(text)!.slice(1).map(Number);
    };
    const [plainIn, plainOut] = (await estimate({})) as [number, number];
    expect(plainOut).toBe(4096);
    const [withSystem, out64] = (await estimate({
      system: "Answer like a pirate, always.",
      max_tokens: "64",
    })) as [number, number];
    expect(withSystem).toBeGreaterThan(plainIn);
    expect(out64).toBe(64);
  });
});
