/**
 * The operator's orders API under /admin/v1 (admin token): list orders for reconciliation, one
 * order with its notification log, and refunds (the same PaymentService.refund as the CLI).
 */
import { Elysia, t } from "elysia";
import { requireAdmin } from "../auth/authenticate.ts";
import { DecimalInput, decimalFromInput, idCursor, PagingQuery, paging } from "../http/inputs.ts";
import { errors, MicroString } from "../http/schemas.ts";
import { DomainError } from "../lib/errors.ts";
import type { AppContext } from "../server/context.ts";
import { notificationView, ORDER_ID, ORDER_STATUSES, type OrderStatus, orderView } from "./order-store.ts";
import { isProviderName } from "./service.ts";

const Nullable = <S extends Awaited<ReturnType<typeof t.String>>>(s: S) => t.Union([s, t.Null()]);
const OrderSchema = t.Object(
  {
    id: t.String(),
    object: t.Literal("order"),
    account_id: t.String(),
    person_id: Nullable(t.String()),
    provider: t.String(),
    provider_ref: Nullable(t.String({ description: "Stripe Checkout Session id or YooKassa payment id." })),
    currency: t.String(),
    amount_micro: MicroString("micro-units of the currency"),
    refunded_micro: MicroString("micro-units refunded so far"),
    status: t.String({ description: "created, pending, paid, failed, expired or canceled" }),
    failure: Nullable(t.String()),
    created_at: t.String(),
    expires_at: t.String(),
    paid_at: Nullable(t.String()),
  },
  { title: "Order" },
);
const NotificationSchema = t.Object(
  {
    id: t.String(),
    provider: t.String(),
    order_id: Nullable(t.String()),
    event_id: Nullable(t.String()),
    event_type: Nullable(t.String()),
    outcome: t.String(),
    detail: Nullable(t.String()),
    received_at: t.String(),
  },
  { title: "PaymentNotification" },
);
const OrderId = t.Object({ id: t.String({ pattern: ORDER_ID.source }) });

export function orderAdminRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/admin/v1", detail: { tags: ["Admin"], security: [{ adminToken: [] }] } })
    .onTransform(({ request }) => {
      requireAdmin(ctx, request);
    })
    .get(
      "/orders",
      async ({ query }) => {
        const { limit, cursor } = paging(query, idCursor(ORDER_ID));
        if (query.status !== undefined && !ORDER_STATUSES.includes(query.status as OrderStatus))
          throw new DomainError("validation_error", `status must be one of ${ORDER_STATUSES.join(", ")}.`, {
            param: "status",
          });
        if (query.provider !== undefined && !isProviderName(query.provider))
          throw new DomainError("validation_error", "provider must be stripe or yookassa.", {
            param: "provider",
          });
        if (query.account_id !== undefined && !/^acct_[0-9A-Za-z]{8,64}$/.test(query.account_id))
          throw new DomainError("validation_error", "account_id must be an account id.", {
            param: "account_id",
          });
        const rows = await ctx.payments.orders.list({
          limit: limit + 1,
          before: cursor,
          status: (query.status as OrderStatus | undefined) ?? null,
          provider: (query.provider as "stripe" | "yookassa" | undefined) ?? null,
          accountId: query.account_id ?? null,
        });
        const page = rows.slice(0, limit);
        return {
          data: page.map(orderView),
          next_cursor: rows.length > limit ? page[page.length - 1]!.id : null,
        };
      },
      {
        query: t.Object({
          ...PagingQuery,
          status: t.Optional(t.String()),
          provider: t.Optional(t.String()),
          account_id: t.Optional(t.String()),
        }),
        detail: {
          summary: "List payment orders",
          description: "Newest first; filter by status, provider, account.",
        },
        response: {
          200: t.Object({ data: t.Array(OrderSchema), next_cursor: t.Union([t.String(), t.Null()]) }),
          ...errors(400, 401),
        },
      },
    )
    .get(
      "/orders/:id",
      async ({ params }) => {
        const o = await ctx.payments.orders.get(params.id);
        if (!o) throw new DomainError("not_found", `No order ${params.id}.`);
        return {
          ...orderView(o),
          notifications: (await ctx.payments.orders.notificationsOf(o.id)).map(notificationView),
        };
      },
      {
        params: OrderId,
        detail: { summary: "Get a payment order", description: "With every notification received for it." },
        response: {
          200: t.Composite([OrderSchema, t.Object({ notifications: t.Array(NotificationSchema) })]),
          ...errors(400, 401, 404),
        },
      },
    )
    .post(
      "/orders/:id/refund",
      async ({ params, body }) =>
        orderView(
          await ctx.payments.refund(
            params.id,
            body.amount === undefined ? null : decimalFromInput(body.amount, "amount"),
            body.reason,
          ),
        ),
      {
        params: OrderId,
        body: t.Object(
          { amount: t.Optional(DecimalInput), reason: t.String({ minLength: 1, maxLength: 500 }) },
          { additionalProperties: false },
        ),
        detail: {
          summary: "Record a refund of a paid order",
          description:
            "A negative adjustment (ADMIN, naming the order) and the order's refunded amount, in one transaction. amount: decimal, default what is left. Never above paid minus refunded, never below what open jobs hold (409). Refund the money itself in the provider's dashboard.",
        },
        response: { 200: OrderSchema, ...errors(400, 401, 404, 409) },
      },
    );
}
