/**
 * The console's page frame: <html lang>, the assets, the htmx config, the header with the navigation,
 * the account switcher and `Sign out`, a skip link and <main>. Also the HTML error page.
 */
import { html, type SafeHtml } from "../lib/html.ts";
import type { ConsoleSession, Role } from "../people/types.ts";
import { consoleAssetPaths } from "./assets.ts";

/** Navigation entries, in order; their link texts are fixed names (docs/console.md "Accessible names"). */
export const NAV = [
  { id: "overview", label: "Overview", href: "/console" },
  { id: "keys", label: "Keys", href: "/console/keys" },
  { id: "usage", label: "Usage", href: "/console/usage" },
  { id: "requests", label: "Requests", href: "/console/requests" },
  { id: "wallet", label: "Wallet", href: "/console/wallet" },
  { id: "billing", label: "Billing", href: "/console/billing" },
  { id: "studio", label: "Studio", href: "/console/studio" },
  { id: "settings", label: "Settings", href: "/console/settings" },
  { id: "admin", label: "Admin", href: "/console/admin", operatorOnly: true },
] as const;

export type NavId = (typeof NAV)[number]["id"];

export interface AccountChoice {
  accountId: string;
  name: string;
  currency: string;
  role: Role;
}

export interface LayoutPage {
  /** The page's <title> and <h1> prefix ("Keys" -> "Keys · gengate"). */
  title: string;
  body: SafeHtml;
  /** Signed in: header with navigation; null: the signed-out frame (sign-in, sign-up...). */
  session: ConsoleSession | null;
  /** The person's accounts (the switcher shows when there are several). */
  accounts?: AccountChoice[];
  /** The navigation entry to mark as current. */
  active?: NavId | null;
  /** A narrow centred column (forms of the signed-out pages). */
  narrow?: boolean;
}

/** The hidden CSRF field every state-changing form carries. */
export function csrfField(session: Pick<ConsoleSession, "csrfToken">): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${session.csrfToken}">`;
}

const HTMX_CONFIG = JSON.stringify({
  includeIndicatorStyles: false,
  allowEval: false,
  allowScriptTags: false,
  selfRequestsOnly: true,
  // Pages may hold a key shown once: never copy them into localStorage.
  historyCacheSize: 0,
  refreshOnHistoryMiss: true,
});

function header(session: ConsoleSession, accounts: AccountChoice[], active: NavId | null): SafeHtml {
  const links = NAV.filter((n) => !("operatorOnly" in n) || session.operator).map(
    (n) =>
      html`<li><a href="${n.href}"${n.id === active ? html` aria-current="page"` : null}>${n.label}</a></li>`,
  );
  const switcher =
    accounts.length > 1
      ? html`<form class="account-switcher" method="post" action="/console/account">
  ${csrfField(session)}
  <label class="visually-hidden" for="account-switch">Account</label>
  <select id="account-switch" name="account" data-autosubmit>
    ${accounts.map(
      (a) =>
        html`<option value="${a.accountId}"${a.accountId === session.accountId ? html` selected` : null}>${a.name} (${a.currency}, ${a.role})</option>`,
    )}
  </select>
  <button type="submit" class="secondary">Switch</button>
</form>`
      : null;
  return html`<header class="site-header">
<div class="bar">
  <a class="brand" href="/console">gengate</a>
  ${switcher}
  <form class="sign-out" method="post" action="/console/logout">
    ${csrfField(session)}
    <span class="hint">${session.email}</span>
    <button type="submit" class="secondary">Sign out</button>
  </form>
</div>
<nav class="site-nav bar" aria-label="Console">
  <ul>${links}</ul>
</nav>
</header>`;
}

/** A whole console page. */
export function layout(page: LayoutPage): SafeHtml {
  const assets = consoleAssetPaths();
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content="${HTMX_CONFIG}">
${page.session ? html`<meta name="csrf-token" content="${page.session.csrfToken}">` : null}
<title>${page.title} · gengate</title>
<link rel="stylesheet" href="${assets.css}">
<link rel="icon" href="data:,">
<script type="module" src="${assets.js}"></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
${page.session ? header(page.session, page.accounts ?? [], page.active ?? null) : html`<header class="site-header"><div class="bar"><a class="brand" href="/console">gengate</a></div></header>`}
<main id="main"${page.narrow ? html` class="narrow"` : null}>
${page.body}
</main>
<footer class="site-footer">
<nav aria-label="Developer links"><ul><li><a href="/docs">API docs</a></li><li><a href="/v1/llms.txt">llms.txt</a></li></ul></nav>
</footer>
</body>
</html>
`;
}

/** The body of an error page: a heading and one sentence (the message is escaped). */
export function errorBody(status: number, message: string): SafeHtml {
  const heading =
    status === 404
      ? "Not found"
      : status === 403
        ? "Not allowed"
        : status === 429
          ? "Too many attempts"
          : status >= 500
            ? "Something went wrong"
            : "That did not work";
  return html`<h1>${heading}</h1>
<p class="notice${status >= 500 ? "" : " error"}" role="alert">${message}</p>
<p><a href="/console">Back to the console</a></p>`;
}
