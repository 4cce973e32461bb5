import { type AnyElysia, Elysia, t } from "elysia";
import type { AppContext } from "../server/context.ts";
import { buildLlmsTxt } from "./llms.ts";
import { buildOpenApi } from "./openapi.ts";
import { SCALAR_BUNDLE_PATH, scalarPage } from "./scalar-page.ts";

const SPEC_PATH = "/v1/openapi.json";
const BUNDLE_PATH = "/docs/assets/scalar.js";

/**
 * Documentation routes. The OpenAPI document is generated from the finished app on first use and
 * cached (routes do not change at run time); llms.txt is rebuilt per catalog snapshot.
 */
export function docsRoutes(ctx: AppContext, getApp: () => AnyElysia) {
  let spec: string | null = null;
  let llms: { catalog: unknown; live: unknown; text: string } | null = null;
  const openapi = () => {
    spec ??= JSON.stringify(buildOpenApi(getApp(), ctx.publicUrl, ctx.version));
    return spec;
  };
  const page = scalarPage(SPEC_PATH, BUNDLE_PATH);

  return new Elysia({ detail: { tags: ["Documentation"] } })
    .get(
      "/v1/openapi.json",
      () => new Response(openapi(), { headers: { "content-type": "application/json; charset=utf-8" } }),
      {
        detail: {
          summary: "OpenAPI schema",
          description: "This API as OpenAPI 3.1, generated from the live routes.",
        },
        response: { 200: t.Record(t.String(), t.Unknown()) },
      },
    )
    .get(
      "/v1/llms.txt",
      () => {
        if (!llms || llms.catalog !== ctx.catalog || llms.live !== ctx.live) {
          const paths = JSON.parse(openapi()).paths;
          llms = { catalog: ctx.catalog, live: ctx.live, text: buildLlmsTxt(ctx, paths) };
        }
        return new Response(llms.text, { headers: { "content-type": "text/plain; charset=utf-8" } });
      },
      {
        detail: {
          summary: "Guide for LLMs and people",
          description: "Live guide with the model table and prices.",
        },
        response: { 200: t.String() },
      },
    )
    .get("/docs", () => new Response(page, { headers: { "content-type": "text/html; charset=utf-8" } }), {
      detail: { hide: true },
    })
    .get(
      BUNDLE_PATH,
      () =>
        new Response(Bun.file(SCALAR_BUNDLE_PATH), {
          headers: {
            "content-type": "text/javascript; charset=utf-8",
            "cache-control": "public, max-age=86400",
          },
        }),
      { detail: { hide: true } },
    );
}
