/**
 * The studio's estimate box (issue 17): the exact price in an element labelled `Estimate` (what
 * POST /v1/estimate answers for the account: src/pricing/account-estimate.ts) with the available
 * balance beside it. The media form and the chat both show it, and the notice of a refused run or
 * message above them (a 402 links Billing).
 */
import type { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import type { AccountEstimate } from "../pricing/account-estimate.ts";
import type { AppContext } from "../server/context.ts";
import { unitsText } from "./format.ts";
import type { AccountSession } from "./kit.ts";
import { money } from "./money-view.ts";

export interface EstimateState {
  estimate?: AccountEstimate | null;
  /** Why there is no estimate (the pricing engine's message). */
  error?: string | null;
  /** What the amount covers, when not the estimate's own units (the chat: its tokens). */
  detail?: string | null;
  /** Shown instead of the amount when there is nothing to estimate yet. */
  empty?: string;
  /** The id of the form the estimate is for (default `studio-form`). */
  form?: string;
}

/** The estimate box: the element labelled `Estimate` and the available balance beside it. */
export async function estimateBox(
  ctx: Pick<AppContext, "accounts">,
  s: AccountSession,
  state: EstimateState,
): Promise<SafeHtml> {
  const form = state.form ?? "studio-form";
  const account = (await ctx.accounts.getAccount(s.accountId))!;
  const available = account.balance_micro - account.held_micro;
  const e = state.estimate;
  const amount = e
    ? e.price_rub_micro !== undefined
      ? money(BigInt(e.price_rub_micro), e.currency)
      : money(BigInt(e.price_usd_micro), "USD")
    : html`<span class="hint">${state.empty ?? "none"}</span>`;
  const detail = state.detail
    ? state.detail
    : e
      ? html`${unitsText(e.units, e.unit)}${e.resolution ? html` at ${e.resolution}` : null}${e.price_rub_micro !== undefined ? html`, ${money(BigInt(e.price_usd_micro), "USD")} at ${money(BigInt(e.fx_rate_micro!), e.currency)} per USD` : null}`
      : null;
  const short = e && BigInt(e.price_rub_micro ?? e.price_usd_micro) > available;
  return html`<div id="studio-estimate-box" class="studio-estimate" aria-live="polite">
  <p><span id="studio-estimate-label">Estimate</span>
    <output id="studio-estimate" aria-labelledby="studio-estimate-label" for="${form}">${amount}</output>
    ${detail ? html`<span class="hint">(${detail})</span>` : null}</p>
  <p><span id="studio-available-label">Available</span>
    <output id="studio-available" aria-labelledby="studio-available-label">${money(available, account.currency)}</output></p>
  ${state.error ? html`<p class="field-error" role="alert">${state.error}</p>` : null}
  ${short ? html`<p class="notice warn">The balance does not cover this run: <a href="/console/billing">top up</a>.</p>` : null}
</div>`;
}

/**
 * Why a run or a chat message was refused, above its form (`#studio-refusal`); a 402 links the
 * billing page, where money is added. `not`: "Not run" / "Not sent"; `again`: what to do after.
 */
export function refusalNotice(err: DomainError | undefined, not: string, again: string): SafeHtml | null {
  if (!err) return null;
  const billing =
    err.code === "insufficient_balance"
      ? html` <a href="/console/billing">Add money on the billing page</a>, then ${again}.`
      : null;
  return html`<p class="notice error" role="alert" id="studio-refusal">${not}, nothing was charged: ${err.message}${billing}</p>`;
}
