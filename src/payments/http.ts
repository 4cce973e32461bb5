/**
 * The providers' notification routes (not under /v1, no API key: the provider is the caller).
 *   POST /payments/stripe/webhook    raw body + Stripe-Signature, verified by the stripe package
 *   POST /payments/yookassa/webhook  unsigned JSON; its payment is fetched from YooKassa's API
 * Answers: 200 {"received": true} for every notification handled (credited, or logged and
 * ignored: a duplicate, a mismatch, an unknown order), so providers stop retrying it; 400 for a
 * bad signature or a payment the provider does not confirm; 502 when the provider's API could not
 * be asked (YooKassa then retries later); 404 when the provider is not enabled.
 */
import { Elysia, t } from "elysia";
import { parseClientJson, readCapped } from "../http/body-limit.ts";
import { errors } from "../http/schemas.ts";
import type { AppContext } from "../server/context.ts";

/** Notifications are small; a bigger body is refused before it is read whole. */
const NOTIFICATION_MAX = 256 * 1024;

const received = () => ({ received: true as const });
const Received = t.Object({ received: t.Literal(true) }, { title: "NotificationReceived" });

export function paymentRoutes(ctx: AppContext) {
  return new Elysia({ detail: { tags: ["Payments"], security: [] } })
    .post(
      "/payments/stripe/webhook",
      async ({ request }) => {
        // The signature covers the exact bytes: read them raw, never re-serialised.
        const raw = new TextDecoder().decode(await readCapped(request, NOTIFICATION_MAX));
        await ctx.payments.stripeNotification(raw, request.headers.get("stripe-signature"));
        return received();
      },
      {
        parse: "none",
        detail: {
          summary: "Stripe webhook",
          description:
            "For Stripe only: the raw event with its Stripe-Signature (300 s tolerance). Credits a paid checkout once; everything handled answers 200. docs/billing.md.",
        },
        response: { 200: Received, ...errors(400, 404, 413) },
      },
    )
    .post(
      "/payments/yookassa/webhook",
      async ({ request }) => {
        // The same client-JSON rules as every API body: nesting bounded before parsing, malformed 400.
        const body = parseClientJson(await readCapped(request, NOTIFICATION_MAX));
        await ctx.payments.yookassaNotification(body);
        return received();
      },
      {
        parse: "none",
        detail: {
          summary: "YooKassa notification",
          description:
            "For YooKassa only: the notification is unsigned, so its payment is fetched from YooKassa's API, which decides. 502 when the API cannot be asked (YooKassa retries). docs/billing.md.",
        },
        response: { 200: Received, ...errors(400, 404, 413, 502) },
      },
    );
}
