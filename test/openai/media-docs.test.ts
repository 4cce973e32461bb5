import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";

/** The OpenAPI document and /v1/llms.txt describe OpenAI's images and speech routes. */
type Op = { tags?: string[]; summary?: string; requestBody?: { content: Record<string, unknown> } };

describe("OpenAI images and speech in the docs", async () => {
  const { request } = await makeTestApp();

  test("the OpenAPI document has the three routes under their tag, with their body types", async () => {
    const spec = await json<{ paths: Record<string, Record<string, Op>>; tags: { name: string }[] }>(
      await request("/v1/openapi.json", { key: null }),
    );
    expect(spec.tags.map((t) => t.name)).toContain("OpenAI media");
    const ops = {
      "/v1/images/generations": "application/json",
      "/v1/images/edits": "multipart/form-data",
      "/v1/audio/speech": "application/json",
    };
    for (const [path, type] of Object.entries(ops)) {
      const op = spec.paths[path]!.post!;
      expect(op.tags).toEqual(["OpenAI media"]);
      expect(op.summary).toContain("OpenAI");
      expect(Object.keys(op.requestBody!.content)).toEqual([type]);
    }
  });

  test("llms.txt has the section and the endpoints", async () => {
    const text = await (await request("/v1/llms.txt", { key: null })).text();
    expect(text).toContain("## OpenAI images and speech");
    expect(text).toContain("| POST | /v1/images/edits | yes |");
    expect(text).toContain("| POST | /v1/audio/speech | yes |");
  });
});
