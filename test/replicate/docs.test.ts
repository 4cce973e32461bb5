import { describe, expect, test } from "bun:test";
import { json, makeTestApp } from "../helpers/context.ts";

type Op = { tags?: string[]; summary?: string; responses: Record<string, unknown> };

describe("the Replicate door in the documents", async () => {
  const { request } = await makeTestApp();

  test("OpenAPI: every route under the Replicate tag, creates answer 201", async () => {
    const spec = await json<{ paths: Record<string, Record<string, Op>> }>(
      await request("/v1/openapi.json", { key: null }),
    );
    const ops: [string, string][] = [
      ["/v1/models/{owner}/{name}/predictions", "post"],
      ["/v1/predictions", "post"],
      ["/v1/predictions", "get"],
      ["/v1/predictions/{id}", "get"],
      ["/v1/predictions/{id}/cancel", "post"],
      ["/v1/webhooks/default/secret", "get"],
    ];
    for (const [path, method] of ops) {
      const op = spec.paths[path]?.[method];
      expect(op?.tags).toEqual(["Replicate"]);
      expect(op?.responses["401"]).toBeDefined();
    }
    expect(spec.paths["/v1/predictions"]!.post!.responses["201"]).toBeDefined();
  });

  test("llms.txt has the Replicate section", async () => {
    const text = await (await request("/v1/llms.txt", { key: null })).text();
    expect(text).toContain("## Replicate clients");
    expect(text).toContain("/models/{owner}/{name}/predictions");
  });
});
