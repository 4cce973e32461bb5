/**
 * The billing page's `Redeem a code` section (src/console/billing-view.ts places it): a field `Code`
 * and a button `Redeem`, posted to billing-redeem-pages.ts. A refused code comes back in `refused`:
 * the page is answered again with what was typed and a fixed message next to the field. A success is
 * `?redeemed=<code id>` (post/redirect/get), whose notice is read back from the account's own TOPUP entry.
 */

import { CODE_INPUT_MAX_LENGTH } from "../codes/code.ts";
import { ALREADY_REDEEMED_MESSAGE } from "../codes/service.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { formatMoney } from "./format.ts";
import { type KitFor, type PageContext, requireAccount } from "./kit.ts";
import { csrfField } from "./layout.ts";

/** Fixed messages per refusal (never the typed text): the keys the POST may answer with. */
const ERRORS: Record<string, (currency: string) => string> = {
  invalid_code: () => "This code is not valid: check it, or ask whoever gave it to you.",
  already_redeemed: () => ALREADY_REDEEMED_MESSAGE,
  currency_mismatch: (cur) => `This code is for another currency; this account is in ${cur}.`,
  rate_limited: () => "Too many invalid codes for this account: try again in an hour.",
  validation_error: () => "Enter a code, e.g. K7RM2-QX9WD-H4NTB-6YCZP.",
};
const RCODE_ID = /^rcode_[0-9A-Za-z]{8,64}$/;

/** A refused redeem: the message's key and the code as typed (kept in the field). */
export interface RedeemRefusal {
  reason: string;
  code: string;
}

/** The refusal a DomainError of CodeService.redeem stands for, or null (anything else is thrown on). */
export function redeemRefusal(err: unknown, code: string): RedeemRefusal | null {
  if (!(err instanceof DomainError)) return null;
  const reason =
    err.code === "invalid_code" && err.message === ALREADY_REDEEMED_MESSAGE ? "already_redeemed" : err.code;
  return Object.hasOwn(ERRORS, reason) ? { reason, code: code.slice(0, CODE_INPUT_MAX_LENGTH) } : null;
}

/** The section, placed right after the balance cards of /console/billing. */
export async function redeemSection(
  kit: KitFor<"accounts" | "wallet">,
  c: PageContext,
  refused: RedeemRefusal | null = null,
): Promise<SafeHtml> {
  const s = requireAccount(c.session);
  const account = await kit.ctx.accounts.getAccount(s.accountId);
  if (!account) return html``;
  const cur = account.currency;
  const error = refused ? ERRORS[refused.reason]!(cur) : null;
  const redeemed = c.url.searchParams.get("redeemed") ?? "";
  let done: SafeHtml | null = null;
  if (!refused && RCODE_ID.test(redeemed)) {
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
    value="${refused?.code ?? ""}" aria-describedby="${error ? "redeem-error redeem-hint" : "redeem-hint"}"${error ? html` aria-invalid="true"` : null}>
  ${error ? html`<p class="notice error" id="redeem-error" role="alert">${error}</p>` : null}
  <p class="hint" id="redeem-hint">A code credits its amount to this ${cur} account once. Case, spaces and dashes do not matter.</p>
  <button type="submit">Redeem</button>
</form>
</section>`;
}
