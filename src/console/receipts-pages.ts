/**
 * Receipts (`/console/billing/receipts/<id>`): one printable page per top-up, for owners. A top-up
 * is a TOPUP wallet entry, caused either by a paid order (`ord_...`: Stripe or YooKassa) or by a
 * redeemed code (`rcode_...`); the id is the entry's ref_id, so the billing page's top-ups table
 * links each one. Another account's order or code, an unpaid order and an unknown id are all 404
 * with the same page: a receipt says nothing about what is not the account's.
 */
import { Elysia } from "elysia";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { ownedOrder } from "../payments/order-search.ts";
import { PROVIDER_LABEL } from "../payments/provider.ts";
import { formatMoney, formatTime } from "./format.ts";
import { type AccountSession, type ConsoleKit, htmlResponse, type PageContext, requireOwner } from "./kit.ts";
import { money } from "./money-view.ts";

const CODE_ID = /^rcode_[A-Za-z0-9]{1,40}$/;
const NO_RECEIPT = "There is no such top-up for this account.";

interface Receipt {
  id: string;
  /** What the receipt calls the id ("Order", "Redeem code"). */
  idLabel: string;
  at: bigint;
  /** "Paid" (an order) or "Redeemed" (a code). */
  atLabel: string;
  amountMicro: bigint;
  currency: string;
  refundedMicro: bigint;
  /** How the money came in, as a sentence fragment for "Paid through". */
  through: SafeHtml;
}

async function orderReceipt(kit: ConsoleKit, s: AccountSession, id: string): Promise<Receipt> {
  const order = await ownedOrder(kit.ctx.payments, s.accountId, id);
  if (order.status !== "paid" || order.paid_at === null) throw new DomainError("not_found", NO_RECEIPT);
  return {
    id: order.id,
    idLabel: "Order",
    at: order.paid_at,
    atLabel: "Paid",
    amountMicro: order.amount_micro,
    currency: order.currency,
    refundedMicro: order.refunded_micro,
    through: html`${PROVIDER_LABEL[order.provider]}, reference <span class="mono">${order.provider_ref ?? "—"}</span>`,
  };
}

async function codeReceipt(kit: ConsoleKit, s: AccountSession, id: string): Promise<Receipt> {
  const code = CODE_ID.test(id) ? await kit.ctx.codes.store.redeemedBy(id, s.accountId) : null;
  if (!code) throw new DomainError("not_found", NO_RECEIPT);
  return {
    id: code.id,
    idLabel: "Redeem code",
    at: code.redeemed_at,
    atLabel: "Redeemed",
    amountMicro: code.amount_micro,
    currency: code.currency,
    refundedMicro: 0n,
    through: html`a redeem code of batch <span class="mono">${code.batch_id}</span> (the code itself is never stored)`,
  };
}

async function receiptPage(c: PageContext, kit: ConsoleKit): Promise<Response> {
  const s = requireOwner(c.session);
  const id = c.params.id ?? "";
  const r = id.startsWith("rcode_") ? await codeReceipt(kit, s, id) : await orderReceipt(kit, s, id);
  const account = (await kit.ctx.accounts.getAccount(s.accountId))!;
  const host = new URL(kit.ctx.publicUrl).host;
  return htmlResponse(
    await c.layout({
      title: `Receipt ${r.id}`,
      active: "billing",
      body: html`<p class="no-print"><a href="/console/billing">← Billing</a> · Print this page with your browser's Print command (the navigation is left out).</p>
<article class="receipt" aria-labelledby="receipt-heading">
<h1 id="receipt-heading">Receipt</h1>
<dl class="facts">
  <dt>Issued by</dt><dd>gengate at ${host}</dd>
  <dt>${r.idLabel}</dt><dd class="mono">${r.id}</dd>
  <dt>${r.atLabel}</dt><dd>${formatTime(r.at)}</dd>
  <dt>Amount</dt><dd>${money(r.amountMicro, r.currency)}</dd>
  ${r.refundedMicro > 0n ? html`<dt>Refunded</dt><dd>${money(r.refundedMicro, r.currency)}</dd>` : null}
  <dt>Account</dt><dd>${account.name} <span class="mono">(${account.id})</span></dd>
  <dt>Through</dt><dd>${r.through}</dd>
  <dt>Credited</dt><dd>to the prepaid balance of the account, as a TOPUP wallet entry naming this ${r.idLabel.toLowerCase()}</dd>
</dl>
<p class="hint">${formatMoney(r.amountMicro, r.currency)} of prepaid credit for generation requests.</p>
</article>`,
    }),
  );
}

export function receiptPages(kit: ConsoleKit) {
  return new Elysia().get(
    "/console/billing/receipts/:id",
    kit.page(async (c) => await receiptPage(c, kit)),
  );
}
