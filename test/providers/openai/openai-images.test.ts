import { afterAll, describe, expect, test } from "bun:test";
import { mockImageModel, openaiMediaHarness } from "./helpers.ts";

// OpenAI images: response_format only where the model takes it (GPT image models refuse it, as the
// mock does like the API), b64_json or url read alike, the stored type read from the bytes.

const { mock, h, stop } = await openaiMediaHarness(
  ["gpt-image-1", "dall-e-3", "urls", "jpeg", "link-mislabelled"].map((n) => mockImageModel(n)),
);
afterAll(stop);

async function lastOutputType(): Promise<string> {
  const rows = await h.t.ctx.sql.all<{ content_type: string }>(
    "SELECT content_type FROM job_outputs ORDER BY created_at DESC, idx LIMIT 1",
  );
  return rows[0]!.content_type;
}
const lastRequest = () => mock.requests.at(-1)!.body;

describe("openai images", () => {
  test("gpt-image-1 (the docs' example): no response_format sent, its base64 image stored", async () => {
    const r = await h.run("oa/gpt-image-1", { prompt: "x" });
    expect(r.error).toBeNull();
    expect(r.status).toBe("COMPLETED");
    expect(lastRequest()).not.toHaveProperty("response_format");
    expect(r.files).toHaveLength(1);
    expect(await lastOutputType()).toBe("image/png");
  });

  test("dall-e-3: asked for b64_json", async () => {
    const r = await h.run("oa/dall-e-3", { prompt: "x" });
    expect(r.status).toBe("COMPLETED");
    expect(lastRequest()).toMatchObject({ response_format: "b64_json" });
  });

  test("a link answer on the upstream's own origin is fetched and stored", async () => {
    const r = await h.run("oa/urls", { prompt: "x", num_images: 2 });
    expect(r.status).toBe("COMPLETED");
    expect(r.files).toHaveLength(2);
    expect(await lastOutputType()).toBe("image/png");
  });

  test("base64 JPEG: stored as image/jpeg with its own pixel size", async () => {
    const r = await h.run("oa/jpeg", { prompt: "x" });
    expect(r.status).toBe("COMPLETED");
    expect(await lastOutputType()).toBe("image/jpeg");
    expect(r.output!.images[0]).toMatchObject({ width: 16, height: 12 });
  });

  test("a link serving JPEG bytes labelled image/png: stored as image/jpeg", async () => {
    const r = await h.run("oa/link-mislabelled", { prompt: "x" });
    expect(r.status).toBe("COMPLETED");
    expect(await lastOutputType()).toBe("image/jpeg");
  });
});
