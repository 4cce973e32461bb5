import { Elysia } from "elysia";
import { errors, jsonResponse } from "../http/schemas.ts";
import { DomainError } from "../lib/errors.ts";
import type { AppContext } from "../server/context.ts";
import { publicModel } from "./model.ts";
import { ModelListSchema, ModelSchema } from "./schemas.ts";

/**
 * The model id of GET /v1/models/{id}: either raw ("sandbox/chat", as listed) or percent-encoded
 * as one path segment ("sandbox%2Fchat", as the OpenAI SDKs send it). Malformed escapes are null.
 */
export function modelIdFromPath(raw: string): string | null {
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}

/** The public, live catalog: no key needed, read at call time. */
export function catalogRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/v1", detail: { tags: ["Catalog"] } })
    .get("/models", () => jsonResponse(ctx.catalog.publicJson), {
      detail: {
        summary: "List models",
        description: "The live catalog with prices, limits and input schemas (OpenAI's model list shape).",
      },
      response: { 200: ModelListSchema },
    })
    .get(
      "/models/*",
      ({ params }) => {
        const id = modelIdFromPath(params["*"]);
        const model = id === null ? undefined : ctx.catalog.get(id);
        if (!model)
          throw new DomainError("not_found", `Model "${id ?? params["*"]}" is not in the catalog.`, {
            param: "model_id",
          });
        return publicModel(model);
      },
      {
        detail: {
          summary: "Get a model",
          description:
            "One catalog entry. The id goes in the path as listed (/v1/models/sandbox/video) or percent-encoded (/v1/models/sandbox%2Fvideo, as OpenAI SDKs send it). An unknown id is 404 not_found.",
        },
        response: { 200: ModelSchema, ...errors(404) },
      },
    );
}
