import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";

type Op = {
  summary: string;
  tags: string[];
  responses: Record<string, { content?: Record<string, unknown> }>;
};

describe("fal.stream in the documents", async () => {
  const { request } = await makeTestApp();

  test("the OpenAPI document has the stream door for two- and three-segment model ids, as SSE", async () => {
    const spec = await json<{ paths: Record<string, Record<string, Op>> }>(
      await request("/v1/openapi.json", { key: null }),
    );
    for (const path of ["/v1/run/{owner}/{alias}/stream", "/v1/run/{owner}/{alias}/{path}/stream"]) {
      const op = spec.paths[path]!.post!;
      expect(op.tags).toEqual(["fal compatibility"]);
      expect(op.responses["200"]!.content!["text/event-stream"]).toBeDefined();
      for (const status of ["400", "401", "402", "429"]) expect(op.responses[status]).toBeDefined();
    }
  });

  test("llms.txt says how to stream and which value forms are accepted", async () => {
    const text = await (await request("/v1/llms.txt", { key: null })).text();
    expect(text).toContain("## fal stream and value forms");
    expect(text).toMatch(/POST \S+\/run\/\{model_id\}\/stream/);
    expect(text).toContain('"5s"');
    expect(text).toContain("landscape_16_9");
  });
});
