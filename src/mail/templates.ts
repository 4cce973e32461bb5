/**
 * The messages gengate mails: an invite, a password reset link and a low-balance alert. Each has a
 * plain-text body and an HTML body built with `html` (src/lib/html.ts), so every value (an
 * account name, an email, a URL) is escaped. Pure functions: no I/O.
 */
import { html, type SafeHtml } from "../lib/html.ts";
import { formatMicro } from "../lib/money.ts";
import type { MailMessage } from "./outbox.ts";

function page(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>
<body style="font-family: sans-serif; line-height: 1.5; max-width: 40em">
${body}
<p style="color: #666; font-size: 0.9em">Sent by gengate. If you did not expect this message, you can ignore it.</p>
</body></html>
`.value;
}

const FOOTER = "\n--\nSent by gengate. If you did not expect this message, you can ignore it.\n";

function utc(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export interface InviteMail {
  url: string;
  /** Epoch seconds. */
  expiresAt: number;
  /** The account joined; null: accepting creates a new account. */
  accountName: string | null;
  role: "owner" | "member";
}

export function inviteMessage(i: InviteMail): MailMessage {
  const what =
    i.accountName === null
      ? "to create an account"
      : `to join the account "${i.accountName}" as ${i.role === "owner" ? "an owner" : "a member"}`;
  const subject = i.accountName === null ? "Your gengate invite" : `Invite to ${i.accountName} on gengate`;
  const text = `You are invited ${what} on gengate.

Open this link to accept (it works once, until ${utc(i.expiresAt)}):
${i.url}
${FOOTER}`;
  const body = html`<p>You are invited ${what} on gengate.</p>
<p><a href="${i.url}">Accept the invite</a> (it works once, until ${utc(i.expiresAt)}).</p>
<p style="word-break: break-all">${i.url}</p>`;
  return { subject, text, html: page(subject, body) };
}

export function passwordResetMessage(url: string): MailMessage {
  const subject = "Reset your gengate password";
  const text = `Someone asked to reset the password of this email's gengate sign-in.

Open this link to set a new password (it works once, for 1 hour; it signs you out everywhere):
${url}

If it was not you, ignore this message: your password stays as it is.
${FOOTER}`;
  const body = html`<p>Someone asked to reset the password of this email's gengate sign-in.</p>
<p><a href="${url}">Set a new password</a> (the link works once, for 1 hour; it signs you out everywhere).</p>
<p style="word-break: break-all">${url}</p>
<p>If it was not you, ignore this message: your password stays as it is.</p>`;
  return { subject, text, html: page(subject, body) };
}

export interface BalanceLowMail {
  accountName: string;
  accountId: string;
  currency: string;
  balanceMicro: bigint;
  heldMicro: bigint;
  thresholdMicro: bigint;
  /** Where to top up ({public_url}/console/billing). */
  billingUrl: string;
}

export function balanceLowMessage(a: BalanceLowMail): MailMessage {
  const money = (micro: bigint) => `${formatMicro(micro)} ${a.currency}`;
  const available = money(a.balanceMicro - a.heldMicro);
  const subject = `Low balance on ${a.accountName}: ${available} available`;
  const text = `The available balance of the gengate account "${a.accountName}" (${a.accountId}) fell below its alert threshold.

Available: ${available}
Balance:   ${money(a.balanceMicro)}
Held:      ${money(a.heldMicro)} (by jobs still running)
Threshold: ${money(a.thresholdMicro)}

Requests are refused (402) once the available balance cannot cover them. Top up at:
${a.billingUrl}

You get this once; the next alert comes after the balance has been topped up above the threshold and falls below it again.
${FOOTER}`;
  const body = html`<p>The available balance of the gengate account <strong>${a.accountName}</strong>
(${a.accountId}) fell below its alert threshold.</p>
<table>
<tr><th scope="row" align="left">Available</th><td>${available}</td></tr>
<tr><th scope="row" align="left">Balance</th><td>${money(a.balanceMicro)}</td></tr>
<tr><th scope="row" align="left">Held</th><td>${money(a.heldMicro)} (by jobs still running)</td></tr>
<tr><th scope="row" align="left">Threshold</th><td>${money(a.thresholdMicro)}</td></tr>
</table>
<p>Requests are refused (402) once the available balance cannot cover them.
<a href="${a.billingUrl}">Top up on the Billing page</a>.</p>
<p>You get this once; the next alert comes after the balance has been topped up above the threshold
and falls below it again.</p>`;
  return { subject, text, html: page(subject, body) };
}
