import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { OpenAIMediaProvider } from "../../../src/providers/openai/media.ts";
import { encodePng } from "../../../src/providers/sandbox/media/index.ts";
import { fakeJob, internalService, model, rejection } from "../comfyui/helpers.ts";

/**
 * Image edits read their source image themselves (OpenAI's /images/edits takes it as a multipart
 * file). The adapter used to fetch `image_url` with a plain fetch: any address, redirects followed.
 * It now reads it through the gateway's input reader (src/files/input-reader.ts): our own uploads
 * from the store, every other URL through the outbound policy of webhooks.
 */
const png = encodePng(6, 6, 4);
const internal = internalService(() => new Response(png, { headers: { "content-type": "image/png" } }));
/** The image file of each edit the upstream received. */
const edits: Uint8Array[] = [];
const upstream = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    if (new URL(req.url).pathname !== "/images/edits") return new Response("no", { status: 404 });
    const image = (await req.formData()).get("image") as Blob;
    edits.push(new Uint8Array(await image.arrayBuffer()));
    return Response.json({ data: [{ b64_json: Buffer.from(png).toString("base64") }] });
  },
});
afterAll(() => {
  internal.server.stop(true);
  upstream.stop(true);
});
beforeEach(() => {
  internal.hits = 0;
  edits.length = 0;
});

const provider = new OpenAIMediaProvider("oa", {
  type: "openai",
  baseUrl: `http://127.0.0.1:${upstream.port}`,
  apiKey: null,
  timeoutMs: 5000,
  concurrency: 1,
  pollIntervalMs: 20,
  workflows: {},
});
const edit = model({ id: "oa/edit", provider: "oa", upstream_model: "gpt-image-1", input_schema: {} });
const imageUrl = `http://127.0.0.1:${internal.server.port}/v1/files/file_x/content?exp=1&sig=x`;

describe("openai image edits: the source image URL", () => {
  test("an internal address is refused before any connection, with a fixed message", async () => {
    const err = await rejection(provider.run(fakeJob({ prompt: "x", image_url: imageUrl }, { model: edit })));
    expect(err.kind).toBe("input");
    expect(err.message).toContain("image_url");
    expect(err.message).not.toContain(String(internal.server.port));
    expect(internal.hits).toBe(0);
    expect(edits).toHaveLength(0);
  });

  test("an address the operator allow-listed is fetched and sent to the upstream as the file", async () => {
    const job = fakeJob(
      { prompt: "x", image_url: imageUrl },
      { model: edit, allowPrivateCidrs: ["127.0.0.0/8"] },
    );
    const result = await provider.run(job);
    expect(result.outputs).toHaveLength(1);
    expect(internal.hits).toBe(1);
    expect(edits[0]).toEqual(new Uint8Array(png));
  });
});
