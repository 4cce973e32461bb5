/**
 * The webhook route of cog servers (not under /v1, no API key: the cog server is the caller; its
 * URL's token is the credential):
 *   POST /providers/cog/{provider}/{job_id}?token=...   a prediction object (cog's webhook payload)
 * Answers 200 {"received": true} for every prediction taken (a final one recorded or a replay, a
 * start/output/logs event dropped); 403 for a token that is not ours for this provider and job
 * (checked before the body is read); 413 over the size cap; 400 for a body that is no prediction of
 * this job. cog retries its final webhook on 429 and 5xx only (docs/providers.md "cog").
 */
import { Elysia, t } from "elysia";
import { parseClientJson, readCapped } from "../http/body-limit.ts";
import { errors } from "../http/schemas.ts";
import { DATA_URL_MAX_BYTES } from "../lib/data-url.ts";
import type { AppContext } from "../server/context.ts";

/**
 * A final webhook carries the outputs, `data:` URLs when the cog server has no upload URL: one
 * output at the data: URL cap (64 MiB) is 85.4 MiB of base64, plus 1 MiB for the rest.
 */
export const COG_WEBHOOK_MAX = Math.ceil((DATA_URL_MAX_BYTES * 4) / 3) + 1024 * 1024;

const Received = t.Object({ received: t.Literal(true) }, { title: "CogWebhookReceived" });

type Ctx = Pick<AppContext, "cogWebhooks">;

/** The token is checked before the body is read: a forged webhook costs no read of its body. */
async function cogWebhook(
  ctx: Ctx,
  request: Request,
  params: { provider: string; job_id: string },
  token: string | undefined,
) {
  ctx.cogWebhooks.authorize(params.provider, params.job_id, token);
  const body = parseClientJson(await readCapped(request, COG_WEBHOOK_MAX));
  await ctx.cogWebhooks.receive(params.provider, params.job_id, body);
  return { received: true as const };
}

export function cogWebhookRoutes(ctx: Ctx) {
  return new Elysia({ detail: { tags: ["Providers"], security: [] } }).post(
    "/providers/cog/:provider/:job_id",
    async ({ request, params, query }) => await cogWebhook(ctx, request, params, query.token),
    {
      parse: "none",
      params: t.Object({ provider: t.String({ maxLength: 64 }), job_id: t.String({ maxLength: 80 }) }),
      query: t.Object({ token: t.Optional(t.String({ maxLength: 64 })) }),
      detail: {
        summary: "cog webhook",
        description:
          "For the operator's cog servers only: the prediction's final webhook, at the signed URL gengate created the prediction with. The first final answer of a job is kept; a replay changes nothing. docs/providers.md.",
      },
      response: { 200: Received, ...errors(400, 403, 413) },
    },
  );
}
