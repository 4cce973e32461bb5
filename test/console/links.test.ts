/** The console links the API docs and llms.txt on every page (signed in or not); /docs links back. */
import { describe, expect, test } from "bun:test";
import { json } from "../helpers/context.ts";
import { consoleApp } from "./helpers.ts";

describe("links between the console and the docs", () => {
  test("every console page's footer links /docs and /v1/llms.txt, and both answer", async () => {
    const c = await consoleApp();
    await c.person("ann@example.com", "owner");
    const signedIn = await c.signedIn("ann@example.com");
    for (const page of [await c.browser().page("/console/login"), await signedIn.page("/console")]) {
      expect(page.text).toContain('<a href="/docs">API docs</a>');
      expect(page.text).toContain('<a href="/v1/llms.txt">llms.txt</a>');
    }
    expect((await c.handle("/docs")).status).toBe(200);
    expect((await c.handle("/v1/llms.txt")).status).toBe(200);
  });

  test("the API reference (/docs reads the OpenAPI description) links the console and llms.txt", async () => {
    const c = await consoleApp();
    const doc = await json<{ info: { description: string } }>(await c.handle("/v1/openapi.json"));
    expect(doc.info.description).toContain("[the web console](/console)");
    expect(doc.info.description).toContain("[/v1/llms.txt](/v1/llms.txt)");
  });
});
