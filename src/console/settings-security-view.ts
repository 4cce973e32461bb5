/**
 * The security settings page (/console/settings/security) of the signed-in person: password,
 * two-factor, sessions. Rendering only: the routes are settings-security-pages.ts and
 * settings-sessions-pages.ts.
 */
import { httpStatus } from "../http/errors.ts";
import { importEntry } from "../lib/entries.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import type { SessionView } from "../people/sessions.ts";
import { PASSWORD_MIN_LENGTH } from "../people/types.ts";
import { describeUserAgent, formatTime } from "./format.ts";
import { type ActionContext, formError, htmlResponse, type KitFor, type PageContext } from "./kit.ts";
import { csrfField } from "./layout.ts";
import { doneNotice, SECURITY_PATH, settingsNav } from "./settings-shared.ts";

/**
 * A QR code of `text` as an <img> data URL (CSP allows data: images): an SVG made on the server by
 * qrcode-generator (no dependencies; its SVG has no style or script), so the page stays script-free.
 */
export async function qrDataUrl(text: string): Promise<string> {
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

export interface SecurityState {
  error?: { section: "password" | "two-factor"; message: string } | null;
  /** Two-factor set-up in progress: the pending secret. */
  setup?: { secret: string; otpauthUrl: string } | null;
  recoveryCodes?: string[] | null;
}

export function passwordSection(c: PageContext, state: SecurityState): SafeHtml {
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

export function twoFactorSection(c: PageContext, state: SecurityState, qr: string | null): SafeHtml {
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
</form>
<form method="post" action="${SECURITY_PATH}/two-factor/cancel">
  ${csrfField(c.session)}
  <p class="hint">This secret key stays the same until you turn two-factor on or cancel the set-up.</p>
  <button type="submit" class="secondary">Cancel set-up</button>
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

export function sessionsSection(c: PageContext, sessions: SessionView[]): SafeHtml {
  const rows = sessions.map((x) => {
    const current = x.id === c.session.sessionId;
    return html`<tr>
  <td>${formatTime(x.createdAt)}</td>
  <td>${formatTime(x.lastSeenAt)}</td>
  <td${x.userAgent ? html` title="${x.userAgent}"` : null}>${describeUserAgent(x.userAgent)}</td>
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

export async function securityPage(kit: KitFor, c: PageContext, state: SecurityState): Promise<SafeHtml> {
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
export async function securityError(
  kit: KitFor,
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
export async function pendingSetup(kit: KitFor, c: PageContext): Promise<SecurityState["setup"]> {
  return await kit.people.twoFactor.pendingTwoFactor(c.session.personId);
}
