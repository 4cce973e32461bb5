import { Elysia, t } from "elysia";
import { requireAdmin } from "../auth/authenticate.ts";
import { DecimalInput, idCursor, PagingQuery, paging } from "../http/inputs.ts";
import { errors, MicroString } from "../http/schemas.ts";
import type { AppContext } from "../server/context.ts";
import { MAX_BATCH_SIZE, NOTE_MAX_LENGTH } from "./service.ts";

const BATCH_ID = /^rbatch_[0-9A-Za-z]{8,64}$/;
const Nullable = <S extends Awaited<ReturnType<typeof t.String>>>(s: S) => t.Union([s, t.Null()]);

export const BatchSchema = t.Object(
  {
    id: t.String({ description: "rbatch_..." }),
    object: t.Literal("redeem_code_batch"),
    currency: t.Union([t.Literal("USD"), t.Literal("RUB")]),
    amount_micro: MicroString("What each code credits, in micro-units of the currency."),
    count: t.Integer({ description: "Codes in the batch." }),
    note: Nullable(t.String()),
    expires_at: Nullable(t.String({ description: "RFC 3339; null: never." })),
    created_at: t.String(),
    created_by: Nullable(t.String({ description: "The person (console); null: the CLI or the admin API." })),
    revoked_at: Nullable(t.String({ description: "When its unused codes were last revoked." })),
    redeemed: t.Integer(),
    unused: t.Integer({ description: "Neither redeemed, revoked nor expired: still redeemable." }),
    expired: t.Integer({ description: "Not redeemed and past expires_at." }),
    revoked: t.Integer(),
  },
  { title: "RedeemCodeBatch" },
);

/** The operator's redeem-code batches under /admin/v1 (the same CodeService as the CLI and the console). */
export function codeAdminRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/admin/v1", detail: { tags: ["Admin"], security: [{ adminToken: [] }] } })
    .onTransform(({ request }) => {
      requireAdmin(ctx, request);
    })
    .post(
      "/code-batches",
      async ({ body, set }) => {
        const { batch, codes } = await ctx.codes.createBatchFrom({
          amount: body.amount,
          currency: body.currency,
          count: body.count,
          expires: body.expires_at,
          note: body.note,
        });
        set.status = 201;
        return { batch_id: batch.id, codes, batch };
      },
      {
        body: t.Object(
          {
            amount: DecimalInput,
            currency: t.Union([t.Literal("USD"), t.Literal("RUB")]),
            count: t.Optional(t.Integer({ minimum: 1, maximum: MAX_BATCH_SIZE, description: "Default 1." })),
            expires_at: t.Optional(
              t.String({
                maxLength: 40,
                description: "YYYY-MM-DD (valid through that day, UTC) or an RFC 3339 time; omitted: never.",
              }),
            ),
            note: t.Optional(t.String({ maxLength: NOTE_MAX_LENGTH })),
          },
          { additionalProperties: false },
        ),
        detail: {
          summary: "Create a batch of redeem codes",
          description:
            "count codes (1 to 1000), each crediting amount (a decimal in currency) to one account of that currency, once. The codes are in this response only: just their SHA-256 is stored.",
        },
        response: {
          201: t.Object({ batch_id: t.String(), codes: t.Array(t.String()), batch: BatchSchema }),
          ...errors(400, 401),
        },
      },
    )
    .get(
      "/code-batches",
      async ({ query }) => {
        const { limit, cursor } = paging(query, idCursor(BATCH_ID));
        const rows = await ctx.codes.listBatches(limit + 1, cursor);
        const page = rows.slice(0, limit);
        return { data: page, next_cursor: rows.length > limit ? page[page.length - 1]!.id : null };
      },
      {
        query: t.Object(PagingQuery),
        detail: {
          summary: "List redeem code batches",
          description: "Newest first, each with its codes counted: redeemed, unused, expired, revoked.",
        },
        response: {
          200: t.Object({ data: t.Array(BatchSchema), next_cursor: Nullable(t.String()) }),
          ...errors(400, 401),
        },
      },
    )
    .get("/code-batches/:id", async ({ params }) => await ctx.codes.getBatch(params.id), {
      params: t.Object({ id: t.String({ pattern: BATCH_ID.source }) }),
      detail: { summary: "Get a redeem code batch" },
      response: { 200: BatchSchema, ...errors(400, 401, 404) },
    })
    .post(
      "/code-batches/:id/revoke",
      async ({ params }) => {
        const { batch, revoked } = await ctx.codes.revokeBatch(params.id);
        return { ...batch, revoked_now: revoked };
      },
      {
        params: t.Object({ id: t.String({ pattern: BATCH_ID.source }) }),
        detail: {
          summary: "Revoke a batch's unused codes",
          description:
            "Every code of the batch not yet redeemed stops working at once (redeeming it is 400 invalid_code); redeemed codes and their credits stay. Again: revokes nothing more.",
        },
        response: {
          200: t.Composite([BatchSchema, t.Object({ revoked_now: t.Integer() })]),
          ...errors(400, 401, 404),
        },
      },
    );
}
