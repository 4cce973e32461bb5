import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";

type Op = { summary?: string; tags?: string[]; security?: unknown[]; requestBody?: unknown };

describe("the Anthropic door in the API's own documents", async () => {
  const { request } = await makeTestApp();

  test("OpenAPI: both routes, tagged, keyed, with their bodies", async () => {
    const spec = await json<{ paths: Record<string, Record<string, Op>> }>(
      await request("/v1/openapi.json", { key: null }),
    );
    for (const path of ["/v1/messages", "/v1/messages/count_tokens"]) {
      const op = spec.paths[path]!.post!;
      expect(op.summary).toContain("Anthropic");
      expect(op.tags).toEqual(["Anthropic"]);
      expect(op.security).toEqual([{ apiKey: [] }]);
      expect(op.requestBody).toBeDefined();
    }
  });

  test("llms.txt: how to point Anthropic's SDKs at gengate", async () => {
    const text = await (await request("/v1/llms.txt", { key: null })).text();
    expect(text).toContain("## Anthropic clients (text models)");
    expect(text).toContain("/v1/messages/count_tokens answers {input_tokens}");
    expect(text).toContain("| POST | /v1/messages | yes |");
  });
});
