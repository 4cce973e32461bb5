/** What the settings pages share: their paths, the ?done= notices, id and role fields, the sub-navigation. */
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import type { Role } from "../people/types.ts";
import type { PageContext } from "./kit.ts";

export const ACCOUNT_PATH = "/console/settings";
export const SECURITY_PATH = "/console/settings/security";

/** Confirmations after a redirect: ?done=<key> shows a fixed sentence (nothing from the URL is echoed). */
export const DONE: Record<string, string> = {
  role: "The role is changed.",
  invited: "The invite link was created. It was shown once and cannot be shown again.",
  removed: "The member is removed from this account.",
  threshold: "The alert threshold is saved.",
  "alert-url": "The alert URL is saved.",
  rotated:
    "The webhook secret is rotated. The new secret was shown once; the old one keeps signing for 24 hours.",
  password: "Your password is changed. Your other sessions are signed out; this one stays signed in.",
  "two-factor-off": "Two-factor sign-in is off. Your recovery codes no longer work.",
  "two-factor-cancelled":
    "Two-factor set-up is cancelled; its secret key no longer works. Remove it from your app.",
  session: "The session is signed out.",
  others: "Your other sessions are signed out; this one stays signed in.",
};

/** Person ids and session ids in URLs: our id shapes only (anything else is a 404 page). */
export const ID_SHAPE = /^[A-Za-z0-9_-]{1,100}$/;

export function idParam(params: Record<string, string>, name: string, what: string): string {
  const id = params[name] ?? "";
  if (!ID_SHAPE.test(id)) throw new DomainError("not_found", `No such ${what}.`);
  return id;
}

export function roleField(value: string): Role {
  if (value !== "owner" && value !== "member")
    throw new DomainError("validation_error", 'The role must be "owner" or "member".', { param: "role" });
  return value;
}

export function settingsNav(active: "account" | "security"): SafeHtml {
  const link = (id: "account" | "security", href: string, label: string) =>
    html`<li><a href="${href}"${id === active ? html` aria-current="page"` : null}>${label}</a></li>`;
  return html`<nav class="subnav" aria-label="Settings">
<ul>${link("account", ACCOUNT_PATH, "Account")}${link("security", SECURITY_PATH, "Your sign-in")}</ul>
</nav>`;
}

export function doneNotice(c: PageContext): SafeHtml | null {
  const message = DONE[c.url.searchParams.get("done") ?? ""];
  return message ? html`<p class="notice ok" role="status">${message}</p>` : null;
}

/** A read-only field holding something shown once, with a copy button. */
export function shownOnce(id: string, label: string, value: string): SafeHtml {
  return html`<div class="stack">
  <label for="${id}">${label}</label>
  <div class="copy-row">
    <input id="${id}" type="text" readonly value="${value}" autocomplete="off" spellcheck="false">
    <button type="button" class="secondary" data-copy="${id}" hidden>Copy</button>
  </div>
</div>`;
}

/** Flash kinds of the account settings page (post/redirect/get): a new invite link, a rotated secret. */
export const NEW_INVITE = "new-invite";
export const ROTATED_SECRET = "rotated-webhook-secret";
