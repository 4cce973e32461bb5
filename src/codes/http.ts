import { Elysia, t } from "elysia";
import { AccountSchema } from "../accounts/schemas.ts";
import { accountBody } from "../accounts/summary.ts";
import { requireManage, requirePrincipal } from "../auth/authenticate.ts";
import { errors, MicroString } from "../http/schemas.ts";
import type { AppContext } from "../server/context.ts";
import { CODE_INPUT_MAX_LENGTH } from "./code.ts";

const RedeemedSchema = t.Composite(
  [
    AccountSchema,
    t.Object({
      redeemed: t.Object({
        code_id: t.String({ description: "The code's id (rcode_...): the wallet entry's ref_id." }),
        amount_micro: MicroString("Credited, in micro-units of the account currency."),
      }),
    }),
  ],
  { title: "AccountAfterRedeem" },
);

/** `POST /v1/account/redeem`: a redeem code into the key's account (docs/billing.md). */
export function redeemRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/v1", detail: { security: [{ apiKey: [] }] } })
    .derive(async ({ request }) => ({ principal: await requirePrincipal(ctx, request) }))
    .post(
      "/account/redeem",
      async ({ principal, body }) => {
        const r = await ctx.codes.redeem(principal.accountId, body.code, principal.keyId);
        return {
          ...(await accountBody(ctx, r.account.id)),
          redeemed: { code_id: r.codeId, amount_micro: r.amountMicro.toString() },
        };
      },
      {
        body: t.Object(
          {
            code: t.String({
              minLength: 1,
              maxLength: CODE_INPUT_MAX_LENGTH,
              description:
                "The code as given, e.g. K7RM2-QX9WD-H4NTB-6YCZP (case, dashes and spaces do not matter).",
            }),
          },
          { additionalProperties: false },
        ),
        beforeHandle: ({ principal }) => requireManage(principal, "redeem codes"),
        detail: {
          tags: ["Account"],
          summary: "Redeem a code",
          description:
            "Credits the code's amount to the account (a wallet entry labelled TOPUP whose ref_id is the code's id) and answers the account with its new balance. Needs a key with the manage right (403 otherwise). A code works once, only for an account of its currency (400 currency_mismatch) and until it expires; an unknown, used, expired or revoked code is 400 invalid_code (one message for all four). After 5 failed codes in an hour the account gets 429 rate_limited with Retry-After, even for a good code. A code that would take the balance above the maximum balance (1000000000000.00) is 400 validation_error naming it; the code stays usable.",
        },
        response: { 200: RedeemedSchema, ...errors(400, 401, 403, 429) },
      },
    );
}
