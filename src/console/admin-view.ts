/**
 * The operator pages' shared frame (/console/admin/*): the section navigation, the page wrapper, the
 * form errors an operator sees on the page they came from, and the one-line notice.
 */
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { htmlResponse, type PageContext } from "./kit.ts";

const SECTIONS = [
  { href: "/console/admin", label: "Accounts" },
  { href: "/console/admin/requests", label: "Requests" },
  { href: "/console/admin/people", label: "People and invites" },
  { href: "/console/admin/providers", label: "Providers" },
  { href: "/console/admin/margins", label: "Margins" },
  { href: "/console/admin/fx", label: "Exchange rates" },
  { href: "/console/admin/codes", label: "Redeem codes" },
  { href: "/console/admin/mail", label: "Mail" },
  { href: "/console/admin/orders", label: "Orders" },
] as const;

/** Operator lists show 50 rows a page (accounts, people, invites). */
export const LIST_SIZE = 50;
export const ACCOUNT_ID = /^acct_[0-9A-Za-z]{8,64}$/;

export async function adminPage(
  c: PageContext,
  title: string,
  current: string,
  body: SafeHtml,
  status = 200,
): Promise<Response> {
  const nav = html`<nav class="subnav" aria-label="Operator">
<ul>${SECTIONS.map((s) => html`<li><a href="${s.href}"${s.href === current ? html` aria-current="page"` : null}>${s.label}</a></li>`)}</ul>
</nav>`;
  return htmlResponse(await c.layout({ title, active: "admin", body: html`${nav}${body}` }), status);
}

/** A form error the operator should see on the page it came from (validation, conflict, not found). */
export function shown(err: unknown): { message: string; status: number } | null {
  if (!(err instanceof DomainError)) return null;
  if (err.code === "validation_error") return { message: err.message, status: 400 };
  if (err.code === "conflict") return { message: err.message, status: 409 };
  if (err.code === "not_found") return { message: err.message, status: 404 };
  return null;
}

export function notice(text: string | null): SafeHtml | null {
  return text ? html`<p class="notice ok" role="status">${text}</p>` : null;
}
