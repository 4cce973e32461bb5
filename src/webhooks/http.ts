import { Elysia, t } from "elysia";
import { requireManage, requirePrincipal } from "../auth/authenticate.ts";
import { errors } from "../http/schemas.ts";
import type { AppContext } from "../server/context.ts";
import type { WebhookSecretStore } from "./secret-store.ts";

export const WebhookSecretSchema = t.Object(
  {
    secret: t.String({
      pattern: "^whsec_[A-Za-z0-9+/]+={0,2}$",
      description:
        'Standard Webhooks signing secret: "whsec_" + base64 of the HMAC-SHA256 key. Verify webhook-signature with it.',
    }),
  },
  { title: "WebhookSecret" },
);

/** The account's webhook signing secret: read and rotate. */
export function webhookRoutes(ctx: AppContext & { webhookSecrets: WebhookSecretStore }) {
  return new Elysia({ prefix: "/v1", detail: { security: [{ apiKey: [] }] } })
    .derive(async ({ request }) => ({ principal: await requirePrincipal(ctx, request) }))
    .get(
      "/account/webhook-secret",
      async ({ principal }) => ({ secret: await ctx.webhookSecrets.get(principal.accountId) }),
      {
        detail: {
          tags: ["Webhooks"],
          summary: "Get the webhook signing secret",
          description:
            "The account's whsec_ secret, created on first read. Every webhook is signed with it per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature). Any key of the account may read it.",
        },
        response: { 200: WebhookSecretSchema, ...errors(401) },
      },
    )
    .post(
      "/account/webhook-secret/rotate",
      async ({ principal }) => ({ secret: await ctx.webhookSecrets.rotate(principal.accountId) }),
      {
        // Rotation needs the manage right: it changes what every receiver of the account must accept.
        // Reading does not: any key may submit jobs with a webhook_url, so its holder needs the secret
        // to verify what arrives (keys of one account already share its balance and its requests).
        beforeHandle: ({ principal }) => requireManage(principal, "rotate the webhook secret"),
        detail: {
          tags: ["Webhooks"],
          summary: "Rotate the webhook signing secret",
          description:
            "Makes a new secret and returns it. For 24 hours webhooks carry two signatures (new and old secret), so receivers can switch without refusing any. Needs the manage right.",
        },
        response: { 200: WebhookSecretSchema, ...errors(401, 403) },
      },
    );
}
