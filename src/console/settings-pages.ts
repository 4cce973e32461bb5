/**
 * Settings (/console/settings): two pages with an in-page navigation.
 *
 *   /console/settings           the account: members (owners invite, remove, change roles), the
 *                               webhook signing secret (owners reveal and rotate), the low-balance
 *                               alert: threshold and alert URL (owners set them; src/alerts/)
 *   /console/settings/security  the signed-in person: password, two-factor, sessions
 *
 * Thin: parse the form, call the PeopleService / AccountStore / WebhookSecretStore (the same stores
 * the API's routes use), then redirect (303) or render the page with what must be shown once (an
 * invite link, the secret, the recovery codes). Owner-only actions call requireOwner first (403 page
 * for a member); the service checks the role again.
 */
import { Elysia } from "elysia";
import { httpStatus } from "../http/errors.ts";
import { importEntry } from "../lib/entries.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { formatMicro, parseDecimalToMicro } from "../lib/money.ts";
import type { MemberView } from "../people/members.ts";
import type { SessionView } from "../people/sessions.ts";
import { PASSWORD_MIN_LENGTH, type Role } from "../people/types.ts";
import { formatMoney, formatTime } from "./format.ts";
import {
  type AccountSession,
  type ActionContext,
  type ConsoleKit,
  field,
  formError,
  htmlResponse,
  type PageContext,
  redirect,
  requireAccount,
  requireOwner,
} from "./kit.ts";
import { csrfField } from "./layout.ts";
import { clearedSessionCookie } from "./security.ts";

const ACCOUNT_PATH = "/console/settings";
const SECURITY_PATH = "/console/settings/security";

/** Confirmations after a redirect: ?done=<key> shows a fixed sentence (nothing from the URL is echoed). */
const DONE: Record<string, string> = {
  role: "The role is changed.",
  removed: "The member is removed from this account.",
  threshold: "The alert threshold is saved.",
  "alert-url": "The alert URL is saved.",
  password: "Your password is changed. Your other sessions are signed out; this one stays signed in.",
  "two-factor-off": "Two-factor sign-in is off. Your recovery codes no longer work.",
  session: "The session is signed out.",
  others: "Your other sessions are signed out; this one stays signed in.",
};

/** Person ids and session ids in URLs: our id shapes only (anything else is a 404 page). */
const ID_SHAPE = /^[A-Za-z0-9_-]{1,100}$/;

function idParam(params: Record<string, string>, name: string, what: string): string {
  const id = params[name] ?? "";
  if (!ID_SHAPE.test(id)) throw new DomainError("not_found", `No such ${what}.`);
  return id;
}

function roleField(value: string): Role {
  if (value !== "owner" && value !== "member")
    throw new DomainError("validation_error", 'The role must be "owner" or "member".', { param: "role" });
  return value;
}

function settingsNav(active: "account" | "security"): SafeHtml {
  const link = (id: "account" | "security", href: string, label: string) =>
    html`<li><a href="${href}"${id === active ? html` aria-current="page"` : null}>${label}</a></li>`;
  return html`<nav class="subnav" aria-label="Settings">
<ul>${link("account", ACCOUNT_PATH, "Account")}${link("security", SECURITY_PATH, "Your sign-in")}</ul>
</nav>`;
}

function doneNotice(c: PageContext): SafeHtml | null {
  const message = DONE[c.url.searchParams.get("done") ?? ""];
  return message ? html`<p class="notice ok" role="status">${message}</p>` : null;
}

/** A read-only field holding something shown once, with a copy button. */
function shownOnce(id: string, label: string, value: string): SafeHtml {
  return html`<div class="stack">
  <label for="${id}">${label}</label>
  <div class="copy-row">
    <input id="${id}" type="text" readonly value="${value}" autocomplete="off" spellcheck="false">
    <button type="button" class="secondary" data-copy="${id}" hidden>Copy</button>
  </div>
</div>`;
}

// ---- the account page ---------------------------------------------------------------------------

interface AccountState {
  notice?: SafeHtml | null;
  error?: string | null;
  invite?: { url: string; email: string; role: Role; expiresAt: number; mailed: boolean } | null;
  /** The alert URL as typed, shown again with its error. */
  alertUrl?: { value: string; error: string } | null;
  secret?: { value: string; rotated: boolean } | null;
}

function membersSection(
  s: AccountSession,
  members: MemberView[],
  state: AccountState,
  mail: boolean,
): SafeHtml {
  const owner = s.role === "owner";
  const rows = members.map((m) => {
    const you = m.personId === s.personId;
    const controls = owner
      ? html`<td class="actions">
  <form class="inline" method="post" action="${ACCOUNT_PATH}/members/${m.personId}/role">
    ${csrfField(s)}
    <select name="role" aria-label="Role of ${m.email}">
      <option value="member"${m.role === "member" ? html` selected` : null}>member</option>
      <option value="owner"${m.role === "owner" ? html` selected` : null}>owner</option>
    </select>
    <button type="submit" class="secondary">Change role</button>
  </form>
  <form class="inline" method="post" action="${ACCOUNT_PATH}/members/${m.personId}/remove">
    ${csrfField(s)}
    <button type="submit" class="secondary" data-dialog="remove-${m.personId}">Remove</button>
  </form>
  <dialog id="remove-${m.personId}" aria-labelledby="remove-${m.personId}-h">
    ${removeForm(s, m, you)}
  </dialog>
</td>`
      : null;
    return html`<tr>
  <td>${m.email}${you ? html` <span class="hint">(you)</span>` : null}</td>
  <td>${m.role}</td>
  <td>${m.twoFactor ? "on" : "off"}</td>
  <td>${formatTime(m.createdAt)}</td>
  ${controls}
</tr>`;
  });
  const invite = state.invite
    ? html`<div class="notice warn" role="status">
  <p>Invite link for <strong>${state.invite.email}</strong> as ${state.invite.role === "owner" ? "an owner" : "a member"}.
  ${state.invite.mailed ? html`It is also being emailed to that address. You can copy it here too: it is` : html`This server sends no email: copy the link now and hand it over yourself. It is`}
  shown only once, works once, and expires ${formatTime(state.invite.expiresAt)}.</p>
  ${shownOnce("invite-link", "Invite link", state.invite.url)}
</div>`
    : null;
  const inviteForm = owner
    ? html`<h3>Invite someone</h3>
<form class="stack" method="post" action="${ACCOUNT_PATH}/members/invite">
  ${csrfField(s)}
  <label>Email <input type="email" name="email" autocomplete="off" required maxlength="254"></label>
  <label>Role
    <select name="role">
      <option value="member" selected>member</option>
      <option value="owner">owner</option>
    </select></label>
  <p class="hint">A member sees usage, requests and the wallet, uses the studio and manages the keys they
  create; an owner can do everything, including members and settings.</p>
  <button type="submit">Create invite link</button>
</form>
${
  mail
    ? html`<p class="hint">The person gets a one-time link (valid 7 days) by email; it is shown to you once too.</p>`
    : html`<p class="hint">You get a one-time link (valid 7 days) to give to the person: this server does not send email.</p>`
}`
    : html`<p class="hint">Only owners invite, remove members or change roles.</p>`;
  return html`<section aria-labelledby="members-h">
<h2 id="members-h">Members</h2>
${invite}
<div class="table-wrap">
<table>
  <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Two-factor</th><th scope="col">Joined</th>${owner ? html`<th scope="col">Actions</th>` : null}</tr></thead>
  <tbody>${rows}</tbody>
</table>
</div>
${inviteForm}
</section>`;
}

function removeForm(s: AccountSession, m: MemberView, you: boolean): SafeHtml {
  return html`<form class="stack" method="post" action="${ACCOUNT_PATH}/members/${m.personId}/remove">
  ${csrfField(s)}
  <input type="hidden" name="confirm" value="yes">
  <h2 id="remove-${m.personId}-h">Remove ${m.email}?</h2>
  <p>${you ? "You will lose access to this account." : "They lose access to this account at once."} Keys
  they created stay until an owner revokes them.</p>
  <div class="button-row">
    <button type="submit" class="danger">Remove member</button>
    <button type="button" class="secondary" data-dialog-close>Cancel</button>
  </div>
</form>`;
}

function rotateForm(s: AccountSession): SafeHtml {
  return html`<form class="stack" method="post" action="${ACCOUNT_PATH}/webhook-secret/rotate">
  ${csrfField(s)}
  <input type="hidden" name="confirm" value="yes">
  <h2 id="rotate-h">Rotate the webhook secret?</h2>
  <p>A new secret is made. For 24 hours webhooks carry two signatures (new and old secret), so your
  receivers can switch over without refusing any; after that the old secret stops working.</p>
  <div class="button-row">
    <button type="submit" class="danger">Rotate now</button>
    <button type="button" class="secondary" data-dialog-close>Cancel</button>
  </div>
</form>`;
}

function secretSection(s: AccountSession, state: AccountState): SafeHtml {
  const about = html`<p>Every webhook of this account is signed with this secret (Standard Webhooks:
<code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>). The API gives it
too: <code>GET /v1/account/webhook-secret</code>.</p>`;
  if (s.role !== "owner") {
    return html`<section aria-labelledby="secret-h">
<h2 id="secret-h">Webhook signing secret</h2>
${about}
<p class="hint">Only owners reveal or rotate it here.</p>
</section>`;
  }
  const shown = state.secret
    ? html`${state.secret.rotated ? html`<p class="notice ok" role="status">The secret is rotated. The old one keeps signing for 24 hours.</p>` : null}
${shownOnce("webhook-secret", "Webhook secret", state.secret.value)}`
    : null;
  const reveal = state.secret
    ? null
    : html`<form method="post" action="${ACCOUNT_PATH}/webhook-secret/reveal">
  ${csrfField(s)}
  <button type="submit" class="secondary">Reveal secret</button>
</form>`;
  return html`<section aria-labelledby="secret-h">
<h2 id="secret-h">Webhook signing secret</h2>
${about}
${shown}
<div class="button-row">
${reveal}
<form method="post" action="${ACCOUNT_PATH}/webhook-secret/rotate">
  ${csrfField(s)}
  <button type="submit" class="secondary" data-dialog="rotate-dialog">Rotate secret</button>
</form>
</div>
<dialog id="rotate-dialog" aria-labelledby="rotate-h">${rotateForm(s)}</dialog>
</section>`;
}

function thresholdSection(
  s: AccountSession,
  account: { alert_threshold_micro: bigint | null; alert_url: string | null; currency: string },
  state: AccountState,
  mail: boolean,
): SafeHtml {
  const threshold = account.alert_threshold_micro;
  const currency = account.currency;
  const current =
    threshold === null
      ? html`<p>No alert threshold is set.</p>`
      : html`<p>When the available balance (balance minus what running jobs hold) falls below
<strong>${formatMoney(threshold, currency)}</strong>, the overview shows a notice${account.alert_url ? html`, a signed webhook goes to the alert URL` : null}${mail ? html` and the owners get an email` : null}: once, until a top-up brings it back to the threshold or above.</p>`;
  const form =
    s.role === "owner"
      ? html`<form class="stack" method="post" action="${ACCOUNT_PATH}/alert-threshold">
  ${csrfField(s)}
  <label>Alert threshold (${currency})
    <span class="hint" id="threshold-hint" aria-hidden="true">A decimal amount such as 10 or 25.50; leave empty for no alert.</span>
    <input name="threshold" aria-describedby="threshold-hint" inputmode="decimal" autocomplete="off" maxlength="32"
      value="${threshold === null ? "" : formatMicro(threshold)}"></label>
  <button type="submit">Save threshold</button>
</form>`
      : html`<p class="hint">Only owners change it.</p>`;
  const typed = state.alertUrl ?? null;
  const urlForm =
    s.role === "owner"
      ? html`<h3>Where the alert goes</h3>
<form class="stack" method="post" action="${ACCOUNT_PATH}/alert-url">
  ${csrfField(s)}
  ${formError(typed?.error)}
  <label>Alert URL
    <span class="hint" id="alert-url-hint" aria-hidden="true">An https:// address of yours that receives the alert as a webhook, signed with the webhook secret above; leave empty for none.</span>
    <input name="alert_url" type="url" aria-describedby="alert-url-hint" autocomplete="off" maxlength="2048"
      value="${typed ? typed.value : (account.alert_url ?? "")}"></label>
  <button type="submit">Save alert URL</button>
</form>`
      : html`<p>Alert URL: ${account.alert_url ? html`<span class="mono">${account.alert_url}</span>` : "none"}.</p>`;
  return html`<section aria-labelledby="alert-h">
<h2 id="alert-h">Low-balance alert</h2>
${current}
${form}
${urlForm}
</section>`;
}

async function accountPage(kit: ConsoleKit, c: PageContext, state: AccountState): Promise<SafeHtml> {
  const s = requireAccount(c.session);
  const account = await kit.ctx.accounts.getAccount(s.accountId);
  if (!account) throw new DomainError("not_found", "No such account.");
  const members = await kit.people.members.listMembers(s.accountId);
  return c.layout({
    title: "Settings",
    active: "settings",
    body: html`<h1>Settings</h1>
${settingsNav("account")}
${state.notice ?? doneNotice(c)}
${formError(state.error)}
<p class="hint">Account <strong>${account.name}</strong> (${account.currency}); you are ${s.role === "owner" ? "an owner" : "a member"}.</p>
${membersSection(s, members, state, kit.ctx.mailer.enabled())}
${secretSection(s, state)}
${thresholdSection(s, account, state, kit.ctx.mailer.enabled())}`,
  });
}

/** The account page again with a service's refusal (last owner, bad email...) and its status. */
async function accountError(kit: ConsoleKit, c: ActionContext, err: unknown): Promise<Response> {
  if (!(err instanceof DomainError) || !["validation_error", "conflict"].includes(err.code)) throw err;
  return htmlResponse(await accountPage(kit, c, { error: err.message }), httpStatus(err.code));
}

/**
 * A QR code of `text` as an <img> data URL (CSP allows data: images): an SVG made on the server by
 * qrcode-generator (no dependencies; its SVG has no style or script), so the page stays script-free.
 */
async function qrDataUrl(text: string): Promise<string> {
  // A separate entry of the binary, loaded at first use (src/lib/entries.ts).
  const qrcode = (await importEntry<typeof import("../entries/qrcode-generator.ts")>("qrcode-generator"))
    .default;
  const qr = qrcode(0, "M");
  qr.addData(text);
  qr.make();
  const svg = qr.createSvgTag({ cellSize: 1, margin: 4, scalable: true });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`;
}

// ---- the security page --------------------------------------------------------------------------

interface SecurityState {
  error?: { section: "password" | "two-factor"; message: string } | null;
  /** Two-factor set-up in progress: the pending secret. */
  setup?: { secret: string; otpauthUrl: string } | null;
  recoveryCodes?: string[] | null;
}

function passwordSection(c: PageContext, state: SecurityState): SafeHtml {
  const error = state.error?.section === "password" ? state.error.message : null;
  return html`<section aria-labelledby="password-h">
<h2 id="password-h">Password</h2>
${formError(error)}
<form class="stack" method="post" action="${SECURITY_PATH}/password">
  ${csrfField(c.session)}
  <input type="text" name="username" value="${c.session.email}" autocomplete="username" hidden>
  <label>Current password
    <input type="password" name="current_password" autocomplete="current-password" required maxlength="1024"></label>
  <label>New password <span class="hint" id="new-password-hint" aria-hidden="true">At least ${PASSWORD_MIN_LENGTH} characters.</span>
    <input type="password" name="new_password" aria-describedby="new-password-hint" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="1024"></label>
  <button type="submit">Change password</button>
</form>
<p class="hint">Changing it signs out your other sessions; this one stays signed in.</p>
</section>`;
}

function twoFactorSection(c: PageContext, state: SecurityState, qr: string | null): SafeHtml {
  const error = state.error?.section === "two-factor" ? state.error.message : null;
  const codes = state.recoveryCodes
    ? html`<div class="notice warn" role="status">
  <p>Two-factor sign-in is on. These are your recovery codes: each signs you in once in place of a code
  from your app. Save them now (a password manager, a printout): they are shown only this once.</p>
  <ol class="mono recovery-codes">${state.recoveryCodes.map((code) => html`<li>${code}</li>`)}</ol>
</div>`
    : null;
  let body: SafeHtml;
  if (c.session.twoFactor) {
    body = html`<p>Two-factor sign-in is <strong>on</strong>: signing in asks for a code from your
authenticator app (or a recovery code).</p>
<form class="stack" method="post" action="${SECURITY_PATH}/two-factor/disable">
  ${csrfField(c.session)}
  <label>Password <span class="hint" id="disable-password-hint" aria-hidden="true">Your password, to turn two-factor off.</span>
    <input type="password" name="password" aria-describedby="disable-password-hint" autocomplete="current-password" required maxlength="1024"></label>
  <button type="submit" class="secondary">Turn off two-factor</button>
</form>`;
  } else if (state.setup) {
    body = html`<ol class="steps">
  <li>Scan this QR code with your authenticator app:
    <p><img class="qr" src="${qr}" width="200" height="200"
      alt="QR code of the two-factor set-up link"></p>
    Or add an account by hand with this secret key (time-based, 6 digits, 30 seconds):
    <p><code class="secret" id="totp-secret">${state.setup.secret}</code>
    <button type="button" class="secondary" data-copy="totp-secret" hidden>Copy</button></p>
    <p class="hint">Or open this link on the device that has the app:
    <a class="mono" href="${state.setup.otpauthUrl}">${state.setup.otpauthUrl}</a></p></li>
  <li>Enter the 6-digit code the app shows.</li>
</ol>
<form class="stack" method="post" action="${SECURITY_PATH}/two-factor/enable">
  ${csrfField(c.session)}
  <label>Code <input name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="16" pattern="[0-9 ]{6,16}"></label>
  <button type="submit">Turn on two-factor</button>
</form>`;
  } else {
    body = html`<p>Two-factor sign-in is <strong>off</strong>. With it on, signing in also asks for a code
from an authenticator app (RFC 6238 TOTP).</p>
<form method="post" action="${SECURITY_PATH}/two-factor/begin">
  ${csrfField(c.session)}
  <button type="submit" class="secondary">Set up two-factor</button>
</form>`;
  }
  return html`<section aria-labelledby="two-factor-h">
<h2 id="two-factor-h">Two-factor sign-in</h2>
${formError(error)}
${codes}
${body}
</section>`;
}

function sessionsSection(c: PageContext, sessions: SessionView[]): SafeHtml {
  const rows = sessions.map((x) => {
    const current = x.id === c.session.sessionId;
    return html`<tr>
  <td>${formatTime(x.createdAt)}</td>
  <td>${formatTime(x.lastSeenAt)}</td>
  <td class="wrap">${x.userAgent ?? "unknown"}</td>
  <td>${x.ip ?? "unknown"}</td>
  <td>${current ? html`<strong>This session</strong>` : null}</td>
  <td><form method="post" action="${SECURITY_PATH}/sessions/${x.id}/revoke">
    ${csrfField(c.session)}
    <button type="submit" class="secondary" aria-label="${current ? "End session (this one)" : `End session started ${formatTime(x.createdAt)}`}">End session</button>
  </form></td>
</tr>`;
  });
  return html`<section aria-labelledby="sessions-h">
<h2 id="sessions-h">Sessions</h2>
<p>Where you are signed in. A session ends after 12 hours without use, or 30 days after sign-in.</p>
<div class="table-wrap">
<table>
  <thead><tr><th scope="col">Signed in</th><th scope="col">Last seen</th><th scope="col">Browser</th><th scope="col">Address</th><th scope="col">Current</th><th scope="col">Actions</th></tr></thead>
  <tbody>${rows}</tbody>
</table>
</div>
<div class="button-row">
  <form method="post" action="${SECURITY_PATH}/sessions/revoke-others">
    ${csrfField(c.session)}
    <button type="submit" class="secondary">Sign out other sessions</button>
  </form>
  <form method="post" action="${SECURITY_PATH}/sessions/revoke-all">
    ${csrfField(c.session)}
    <button type="submit" class="secondary">Sign out everywhere</button>
  </form>
</div>
<p class="hint"><em>Sign out other sessions</em> keeps this one; <em>Sign out everywhere</em> ends every
session, this one included.</p>
</section>`;
}

async function securityPage(kit: ConsoleKit, c: PageContext, state: SecurityState): Promise<SafeHtml> {
  const sessions = await kit.people.sessions.listSessions(c.session.personId);
  const qr = state.setup ? await qrDataUrl(state.setup.otpauthUrl) : null;
  return c.layout({
    title: "Settings",
    active: "settings",
    body: html`<h1>Settings</h1>
${settingsNav("security")}
${doneNotice(c)}
<p class="hint">Signed in as <strong>${c.session.email}</strong>.</p>
${passwordSection(c, state)}
${twoFactorSection(c, state, qr)}
${sessionsSection(c, sessions)}`,
  });
}

/** The security page again with a service's refusal in its section. */
async function securityError(
  kit: ConsoleKit,
  c: ActionContext,
  section: "password" | "two-factor",
  err: unknown,
  extra: SecurityState = {},
): Promise<Response> {
  if (!(err instanceof DomainError) || !["validation_error", "unauthorized", "conflict"].includes(err.code))
    throw err;
  return htmlResponse(
    await securityPage(kit, c, { ...extra, error: { section, message: err.message } }),
    httpStatus(err.code),
  );
}

/** The pending (not yet confirmed) two-factor secret of the person, to show the set-up again. */
async function pendingSetup(kit: ConsoleKit, c: PageContext): Promise<SecurityState["setup"]> {
  return await kit.people.twoFactor.pendingTwoFactor(c.session.personId);
}

// ---- routes -------------------------------------------------------------------------------------

export function settingsPages(kit: ConsoleKit) {
  const secrets = () => kit.ctx.webhookSecrets;
  return (
    new Elysia()
      .get(
        ACCOUNT_PATH,
        kit.page(async (c) => await accountPage(kit, c, {})),
      )
      .get(
        SECURITY_PATH,
        kit.page(async (c) => await securityPage(kit, c, {})),
      )
      // ---- members (owners)
      .post(
        `${ACCOUNT_PATH}/members/invite`,
        kit.action(async (c) => {
          const s = requireOwner(c.session);
          const role = roleField(field(c.form, "role") || "member");
          const email = field(c.form, "email").trim();
          if (!email)
            return accountError(kit, c, new DomainError("validation_error", "Enter an email address."));
          try {
            const made = await kit.people.invites.createInvite({
              email,
              accountId: s.accountId,
              role,
              createdBy: s.personId,
            });
            return await accountPage(kit, c, {
              invite: {
                url: made.url,
                email: email.toLowerCase(),
                role,
                expiresAt: made.expiresAt,
                mailed: made.mailed,
              },
            });
          } catch (err) {
            return accountError(kit, c, err);
          }
        }),
      )
      .post(
        `${ACCOUNT_PATH}/members/:personId/role`,
        kit.action(async (c) => {
          const s = requireOwner(c.session);
          const personId = idParam(c.params, "personId", "member");
          const role = roleField(field(c.form, "role"));
          try {
            await kit.people.members.setRole(s.accountId, personId, role, s);
          } catch (err) {
            return accountError(kit, c, err);
          }
          return redirect(`${ACCOUNT_PATH}?done=role`);
        }),
      )
      .post(
        `${ACCOUNT_PATH}/members/:personId/remove`,
        kit.action(async (c) => {
          const s = requireOwner(c.session);
          const personId = idParam(c.params, "personId", "member");
          const member = (await kit.people.members.listMembers(s.accountId)).find(
            (m) => m.personId === personId,
          );
          if (!member) throw new DomainError("not_found", "No such member.");
          if (field(c.form, "confirm") !== "yes") {
            // Without JavaScript the Remove button lands here: the same confirmation as the dialog.
            return c.layout({
              title: "Remove member",
              active: "settings",
              body: removeForm(s, member, personId === s.personId),
            });
          }
          try {
            await kit.people.members.removeMember(s.accountId, personId, s);
          } catch (err) {
            return accountError(kit, c, err);
          }
          return redirect(personId === s.personId ? "/console" : `${ACCOUNT_PATH}?done=removed`);
        }),
      )
      // ---- webhook secret (owners)
      .post(
        `${ACCOUNT_PATH}/webhook-secret/reveal`,
        kit.action(async (c) => {
          const s = requireOwner(c.session);
          return await accountPage(kit, c, {
            secret: { value: await secrets().get(s.accountId), rotated: false },
          });
        }),
      )
      .post(
        `${ACCOUNT_PATH}/webhook-secret/rotate`,
        kit.action(async (c) => {
          const s = requireOwner(c.session);
          if (field(c.form, "confirm") !== "yes") {
            return c.layout({ title: "Rotate the webhook secret", active: "settings", body: rotateForm(s) });
          }
          return await accountPage(kit, c, {
            secret: { value: await secrets().rotate(s.accountId), rotated: true },
          });
        }),
      )
      // ---- alert threshold (owners)
      .post(
        `${ACCOUNT_PATH}/alert-threshold`,
        kit.action(async (c) => {
          const s = requireOwner(c.session);
          const text = field(c.form, "threshold")
            .trim()
            .replace(/[\s,_]/g, "");
          let micro: bigint | null = null;
          if (text !== "") {
            micro = parseDecimalToMicro(text);
            if (micro === null) {
              return accountError(
                kit,
                c,
                new DomainError(
                  "validation_error",
                  "The alert threshold must be a positive amount with at most 6 decimals, or empty for none.",
                  { param: "threshold" },
                ),
              );
            }
          }
          await kit.ctx.accounts.setAlertThreshold(s.accountId, micro);
          return redirect(`${ACCOUNT_PATH}?done=threshold`);
        }),
      )
      .post(
        `${ACCOUNT_PATH}/alert-url`,
        kit.action(async (c) => {
          const s = requireOwner(c.session);
          const value = field(c.form, "alert_url").trim();
          let url: string | null = null;
          if (value !== "") {
            try {
              // The job webhooks' policy: http(s), public addresses only (or the operator's CIDRs).
              url = (await kit.ctx.checkWebhookUrl(value)).href;
            } catch (err) {
              if (!(err instanceof DomainError) || err.code !== "bad_webhook_url") throw err;
              const message = err.message.replace(/^webhook_url/, "The alert URL");
              return htmlResponse(
                await accountPage(kit, c, { alertUrl: { value: value.slice(0, 2048), error: message } }),
                400,
              );
            }
          }
          await kit.ctx.alerts.setUrl(s.accountId, url);
          return redirect(`${ACCOUNT_PATH}?done=alert-url`);
        }),
      )
      // ---- password
      .post(
        `${SECURITY_PATH}/password`,
        kit.action(async (c) => {
          try {
            await kit.people.resets.changePassword(
              c.session.personId,
              field(c.form, "current_password"),
              field(c.form, "new_password"),
              c.session.sessionId,
            );
          } catch (err) {
            return securityError(kit, c, "password", err);
          }
          return redirect(`${SECURITY_PATH}?done=password`);
        }),
      )
      // ---- two-factor
      .post(
        `${SECURITY_PATH}/two-factor/begin`,
        kit.action(async (c) => {
          try {
            return await securityPage(kit, c, {
              setup: await kit.people.twoFactor.beginTwoFactor(c.session.personId),
            });
          } catch (err) {
            return securityError(kit, c, "two-factor", err);
          }
        }),
      )
      .post(
        `${SECURITY_PATH}/two-factor/enable`,
        kit.action(async (c) => {
          try {
            const { recoveryCodes } = await kit.people.twoFactor.enableTwoFactor(
              c.session.personId,
              field(c.form, "code").trim(),
            );
            return await securityPage(
              kit,
              { ...c, session: { ...c.session, twoFactor: true } },
              { recoveryCodes },
            );
          } catch (err) {
            return securityError(kit, c, "two-factor", err, { setup: await pendingSetup(kit, c) });
          }
        }),
      )
      .post(
        `${SECURITY_PATH}/two-factor/disable`,
        kit.action(async (c) => {
          try {
            await kit.people.twoFactor.disableTwoFactor(c.session.personId, field(c.form, "password"));
          } catch (err) {
            return securityError(kit, c, "two-factor", err);
          }
          return redirect(`${SECURITY_PATH}?done=two-factor-off`);
        }),
      )
      // ---- sessions
      .post(
        `${SECURITY_PATH}/sessions/revoke-others`,
        kit.action(async (c) => {
          await kit.people.sessions.signOutEverywhere(c.session.personId, c.session.sessionId);
          return redirect(`${SECURITY_PATH}?done=others`);
        }),
      )
      .post(
        `${SECURITY_PATH}/sessions/revoke-all`,
        kit.action(async (c) => {
          await kit.people.sessions.signOutEverywhere(c.session.personId);
          return redirect("/console/login", { "set-cookie": clearedSessionCookie(kit.secure) });
        }),
      )
      .post(
        `${SECURITY_PATH}/sessions/:sessionId/revoke`,
        kit.action(async (c) => {
          const sessionId = idParam(c.params, "sessionId", "session");
          await kit.people.sessions.revokeSession(c.session.personId, sessionId);
          if (sessionId === c.session.sessionId)
            return redirect("/console/login", { "set-cookie": clearedSessionCookie(kit.secure) });
          return redirect(`${SECURITY_PATH}?done=session`);
        }),
      )
  );
}
