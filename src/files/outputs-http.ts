import { Elysia, t } from "elysia";
import { optionalPrincipal } from "../auth/authenticate.ts";
import { requestMeta } from "../http/request-meta.ts";
import { errors } from "../http/schemas.ts";
import { DomainError } from "../lib/errors.ts";
import { UUID_PATTERN } from "../lib/ids.ts";
import type { AppContext } from "../server/context.ts";
import { outputDownload } from "./output-download.ts";
import { LINK_TTL_SECONDS } from "./signing.ts";

/** GET /v1/requests/{id}/output/{index}: a signed link (no key) or the owning key. */
export function outputRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/v1", detail: { tags: ["Queue"] } }).get(
    "/requests/:id/output/:index",
    async ({ params, query, request }) => {
      if (!UUID_PATTERN.test(params.id))
        throw new DomainError("validation_error", "request_id must be a UUID.", { param: "request_id" });
      if (!/^\d{1,4}$/.test(params.index)) {
        throw new DomainError("validation_error", "index must be a non-negative integer.", {
          param: "index",
        });
      }
      const index = Number(params.index);
      const principal = await optionalPrincipal(ctx, request);
      const signed = query.exp !== undefined || query.sig !== undefined;
      let allowed = false;
      if (signed) {
        if (!/^\d{1,12}$/.test(query.exp ?? "") || !query.sig) {
          throw new DomainError("forbidden", "A signed link needs both exp (unix seconds) and sig.");
        }
        const exp = Number(query.exp);
        const now = Math.floor(Date.now() / 1000);
        const valid =
          exp <= now + LINK_TTL_SECONDS + 60 && ctx.signer.verify(params.id, index, exp, query.sig);
        if (valid && exp < now)
          throw new DomainError(
            "expired",
            "This signed link has expired; read the response again for a fresh one.",
          );
        allowed = valid;
      }
      const file = await ctx.jobOutputs.file(params.id, index);
      if (!allowed) {
        // Without a valid signature only the owning key may download.
        if (!principal) {
          if (signed) throw new DomainError("forbidden", "The link's signature is not valid.");
          throw new DomainError("unauthorized", "Send a signed link (exp and sig) or the owning key.");
        }
        if (!file || file.account_id !== principal.accountId)
          throw new DomainError("not_found", "No such output.");
      }
      if (!file) throw new DomainError("not_found", "No such output.");

      return await outputDownload(ctx, request, file, { requestId: params.id, index });
    },
    {
      params: t.Object({ id: t.String(), index: t.String({ description: "0-based output index" }) }),
      query: t.Object({
        exp: t.Optional(t.String({ description: "Expiry, unix seconds" })),
        sig: t.Optional(t.String({ description: "base64url HMAC-SHA256 signature" })),
      }),
      detail: {
        summary: "Download an output",
        description:
          "With a valid exp and sig (no key needed) or the owning key. Range requests answer 206 and do not count; the 201st full download is 429 download_cap.",
        security: [{}, { apiKey: [] }],
        responses: {
          200: {
            description: "The file",
            content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
          },
          206: {
            description: "A byte range",
            content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
          },
        },
      },
      response: errors(400, 401, 403, 404, 410, 416, 429),
    },
  );
}
