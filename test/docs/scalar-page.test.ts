import { describe, expect, test } from "bun:test";
import { makeTestApp } from "../helpers/context.ts";

/** The Scalar configuration the served /docs page hands to the bundle. */
function pageConfig(html: string): Record<string, unknown> {
  const m = /data-configuration='([^']*)'/.exec(html);
  if (!m) throw new Error("no data-configuration attribute in the page");
  return JSON.parse(m[1]!.replaceAll("&#39;", "'")) as Record<string, unknown>;
}

describe("GET /docs: Scalar features that call scalar.com are off", async () => {
  const { request } = await makeTestApp();

  test("the page disables the AI agent (Ask AI) and MCP (Generate MCP)", async () => {
    const config = pageConfig(await (await request("/docs", { key: null })).text());
    expect(config.agent).toEqual({ disabled: true });
    expect(config.mcp).toEqual({ disabled: true });
    // And the rest of the air-gapped set: no fonts, telemetry or proxy from the internet.
    expect(config.withDefaultFonts).toBe(false);
    expect(config.telemetry).toBe(false);
    expect(config.proxyUrl).toBe("");
    expect(config.showDeveloperTools).toBe("never");
    expect(config.cdn).toBe("/docs/assets/scalar.js");
    expect(config.url).toBe("/v1/openapi.json");
  });

  test("the served bundle reads exactly these option names (a Scalar upgrade that renames them fails here)", async () => {
    const js = await (await request("/docs/assets/scalar.js", { key: null })).text();
    // Scalar 1.72: agentEnabled = agent?.disabled ? false : isLocalHost(location) ? true : !!agent?.key,
    // and the MCP entry shows when !mcp?.disabled && (isLocalHost(location) || mcp).
    expect(js).toContain(".agent?.disabled?!1:");
    expect(js).toContain("mcp?.disabled&&");
  });

  test("the page references no other origin (no absolute or protocol-relative URL)", async () => {
    const html = await (await request("/docs", { key: null })).text();
    expect(html).not.toMatch(/[a-z][a-z0-9+.-]*:\/\//i);
    expect(html).not.toMatch(/(src|href|action)\s*=\s*["']?\/\//i);
    const config = JSON.stringify(pageConfig(html));
    expect(config).not.toContain("//");
  });
});
