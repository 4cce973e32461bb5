import { Elysia } from "elysia";
import { ApiError } from "../http/errors.ts";
import { errors, jsonResponse } from "../http/schemas.ts";
import type { AppContext } from "../server/context.ts";
import { publicModel } from "./model.ts";
import { ModelListSchema, ModelSchema } from "./schemas.ts";

/** The public, live catalog: no key needed, read at call time. */
export function catalogRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/v1", detail: { tags: ["Catalog"] } })
    .get("/models", () => jsonResponse(ctx.catalog.publicJson), {
      detail: {
        summary: "List models",
        description: "The live catalog with prices, limits and input schemas.",
      },
      response: { 200: ModelListSchema },
    })
    .get(
      "/models/*",
      ({ params }) => {
        const model = ctx.catalog.get(params["*"]);
        if (!model)
          throw new ApiError("unknown_model", `Model "${params["*"]}" is not in the catalog.`, {
            param: "model_id",
          });
        return publicModel(model);
      },
      {
        detail: {
          summary: "Get a model",
          description:
            "One catalog entry; the model id goes in the path as listed (e.g. /v1/models/sandbox/video).",
        },
        response: { 200: ModelSchema, ...errors(400) },
      },
    );
}
