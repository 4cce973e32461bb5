/**
 * `POST /console/billing/redeem` (the billing page's `Redeem a code`, billing-redeem-view.ts): calls
 * the same CodeService.redeem as POST /v1/account/redeem (throttle, currency check, one transaction).
 * Owners only (owners do billing, docs/console.md; the API asks for a key with the manage right): a
 * member's POST is 403. A success redirects to `?redeemed=<code id>` (a reload never posts the code
 * again); a refusal answers the billing page again with the API's status, the code as typed and a
 * fixed message next to the field (a code this account already used says so).
 */
import { Elysia } from "elysia";
import { CODE_INPUT_MAX_LENGTH } from "../codes/code.ts";
import { errorHeaders, httpStatus } from "../http/errors.ts";
import { DomainError } from "../lib/errors.ts";
import { redeemRefusal } from "./billing-redeem-view.ts";
import { billingPage } from "./billing-view.ts";
import { type ActionContext, type ConsoleKit, field, htmlResponse, redirect, requireOwner } from "./kit.ts";

async function redeem(c: ActionContext, kit: ConsoleKit): Promise<Response> {
  const s = requireOwner(c.session);
  const code = field(c.form, "code");
  try {
    if (code.length > CODE_INPUT_MAX_LENGTH)
      throw new DomainError("validation_error", "Enter a code.", { param: "code" });
    const r = await kit.ctx.codes.redeem(s.accountId, code, c.session.personId);
    return redirect(`/console/billing?redeemed=${r.codeId}#redeem`);
  } catch (err) {
    const refused = redeemRefusal(err, code);
    if (!refused || !(err instanceof DomainError)) throw err;
    return htmlResponse(await billingPage(kit, c, refused), httpStatus(err.code), errorHeaders(err));
  }
}

/** `POST /console/billing/redeem`: owners only; Origin and CSRF checked by kit.action. */
export function billingRedeemPages(kit: ConsoleKit) {
  return new Elysia().post(
    "/console/billing/redeem",
    kit.action((c) => redeem(c, kit)),
  );
}
