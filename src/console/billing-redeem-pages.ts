/**
 * The billing page's `Redeem a code` section and its POST (`/console/billing/redeem`): a field
 * `Code` and a button `Redeem`, calling the same CodeService.redeem as POST /v1/account/redeem
 * (throttle, currency check, one transaction). Owners only (owners do billing, docs/console.md; the API
 * asks for a key with the manage right): a member sees why there is no form, and a member's POST is 403.
 * The answer is a redirect back to the billing page (a reload never posts the code again): on
 * success `?redeemed=<code id>`, whose notice (amount credited, balance after) is read back from
 * the account's own TOPUP entry; on failure `?redeem_error=<code>`, a fixed message next to the field.
 */
import { Elysia } from "elysia";
import { CODE_INPUT_MAX_LENGTH } from "../codes/code.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { formatMoney } from "./format.ts";
import { type ConsoleKit, field, type PageContext, redirect, requireAccount, requireOwner } from "./kit.ts";
import { csrfField } from "./layout.ts";

const ERRORS: Record<string, (currency: string) => string> = {
  invalid_code: () => "This code is not valid: check it, or ask whoever gave it to you.",
  currency_mismatch: (cur) => `This code is for another currency; this account is in ${cur}.`,
  rate_limited: () => "Too many invalid codes for this account: try again in an hour.",
  validation_error: () => "Enter a code, e.g. K7RM2-QX9WD-H4NTB-6YCZP.",
};
const RCODE_ID = /^rcode_[0-9A-Za-z]{8,64}$/;

/** The section, placed right after the balance cards of /console/billing. */
export async function redeemSection(kit: ConsoleKit, c: PageContext): Promise<SafeHtml> {
  const s = requireAccount(c.session);
  const account = await kit.ctx.accounts.getAccount(s.accountId);
  if (!account) return html``;
  const cur = account.currency;
  const errorKey = c.url.searchParams.get("redeem_error") ?? "";
  const error = Object.hasOwn(ERRORS, errorKey) ? ERRORS[errorKey]!(cur) : null;
  const redeemed = c.url.searchParams.get("redeemed") ?? "";
  let done: SafeHtml | null = null;
  if (RCODE_ID.test(redeemed)) {
    // Only this account's own credit for that code is shown back (never text from the URL).
    const entry = (await kit.ctx.wallet.list(s.accountId, { limit: 20, source: "TOPUP" })).rows.find(
      (e) => e.ref_id === redeemed,
    );
    if (entry)
      done = html`<p class="notice ok" role="status">Code redeemed: ${formatMoney(entry.amount_micro, cur)} credited. The balance is now ${formatMoney(entry.balance_after_micro, cur)}.</p>`;
  }
  if (s.role !== "owner") {
    return html`<section aria-labelledby="redeem-heading">
<h2 id="redeem-heading">Redeem a code</h2>
<p>Only an owner of this account can redeem codes.</p>
</section>`;
  }
  return html`<section aria-labelledby="redeem-heading" id="redeem">
<h2 id="redeem-heading">Redeem a code</h2>
${done}
<form class="stack" method="post" action="/console/billing/redeem">
  ${csrfField(s)}
  <label for="redeem-code">Code</label>
  <input id="redeem-code" name="code" required maxlength="${CODE_INPUT_MAX_LENGTH}" autocomplete="off" autocapitalize="characters" spellcheck="false"
    aria-describedby="${error ? "redeem-error redeem-hint" : "redeem-hint"}"${error ? html` aria-invalid="true"` : null}>
  ${error ? html`<p class="notice error" id="redeem-error" role="alert">${error}</p>` : null}
  <p class="hint" id="redeem-hint">A code credits its amount to this ${cur} account once. Case, spaces and dashes do not matter.</p>
  <button type="submit">Redeem</button>
</form>
</section>`;
}

/** `POST /console/billing/redeem`: owners only; Origin and CSRF checked by kit.action. */
export function billingRedeemPages(kit: ConsoleKit) {
  return new Elysia().post(
    "/console/billing/redeem",
    kit.action(async (c) => {
      const s = requireOwner(c.session);
      const code = field(c.form, "code");
      try {
        if (code.length > CODE_INPUT_MAX_LENGTH)
          throw new DomainError("validation_error", "Enter a code.", { param: "code" });
        const by = c.session.personId;
        const r = await kit.ctx.codes.redeem(s.accountId, code, by);
        return redirect(`/console/billing?redeemed=${r.codeId}#redeem`);
      } catch (err) {
        if (err instanceof DomainError && Object.hasOwn(ERRORS, err.code))
          return redirect(`/console/billing?redeem_error=${err.code}#redeem`);
        throw err;
      }
    }),
  );
}
