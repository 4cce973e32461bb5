/**
 * What the signed-out pages share (auth-*-pages.ts): their HTML (sign-in with the two-factor step,
 * sign-up, invite, reset, "forgot password", the welcome page with the new key shown once), the session cookie on
 * success, and how a people service's refusal is shown.
 */
import { httpStatus } from "../http/errors.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import type { ConsoleSession, NewSession } from "../people/types.ts";
import { PASSWORD_MIN_LENGTH } from "../people/types.ts";
import { formError, type KitFor, type PublicPageContext, redirect } from "./kit.ts";
import { layout } from "./layout.ts";
import { sessionCookie } from "./security.ts";

export const SIGN_IN_FAILED = "The email or password is not right.";
export const LINK_INVALID = "This link is not valid, was already used, or has expired. Ask for a new one.";

export function narrowPage(title: string, body: SafeHtml): SafeHtml {
  return layout({ title, body, session: null, narrow: true });
}

export function nextField(next: string | null): SafeHtml {
  return html`${next ? html`<input type="hidden" name="next" value="${next}">` : null}`;
}

/** The second factor, asked again on forms where an existing person proves who they are. */
export function codeField(): SafeHtml {
  return html`<label>Two-factor code
    <span class="hint">The 6-digit code from your authenticator app, or one of your recovery codes.</span>
    <input name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="64"></label>`;
}

/**
 * The rule under a new-password field: outside its <label>, so the field's label is exactly
 * `Password` (docs/console.md; playwright's getByLabel matches the label's text), tied by aria-describedby.
 */
export function passwordHint(): SafeHtml {
  return html`<span class="hint field-hint" id="password-hint">At least ${PASSWORD_MIN_LENGTH} characters.</span>`;
}

export interface LoginState {
  email?: string;
  next: string | null;
  error?: string | null;
  notice?: string | null;
  /** The two-factor step: the right password was given, now the code. */
  twoFactor?: { password: string } | null;
  signupOpen: boolean;
}

export function loginPage(s: LoginState): SafeHtml {
  if (s.twoFactor) {
    return narrowPage(
      "Sign in",
      html`<h1>Two-factor code</h1>
${formError(s.error)}
<form class="stack" method="post" action="/console/login">
  <input type="hidden" name="email" value="${s.email ?? ""}">
  <input type="hidden" name="password" value="${s.twoFactor.password}">
  ${nextField(s.next)}
  <label>Two-factor code
    <span class="hint">The 6-digit code from your authenticator app, or one of your recovery codes.</span>
    <input name="code" inputmode="numeric" autocomplete="one-time-code" required autofocus maxlength="64">
  </label>
  <button type="submit">Sign in</button>
</form>
<p><a href="/console/login">Start again</a></p>`,
    );
  }
  return narrowPage(
    "Sign in",
    html`<h1>Sign in</h1>
${s.notice ? html`<p class="notice ok" role="status">${s.notice}</p>` : null}
${formError(s.error)}
<form class="stack" method="post" action="/console/login">
  ${nextField(s.next)}
  <label>Email <input type="email" name="email" value="${s.email ?? ""}" autocomplete="username" required maxlength="320"></label>
  <label>Password <input type="password" name="password" autocomplete="current-password" required maxlength="1024"></label>
  <button type="submit">Sign in</button>
</form>
<p><a href="/console/forgot">Forgot your password?</a></p>
${s.signupOpen ? html`<p>No account yet? <a href="/console/signup">Sign up</a></p>` : null}`,
  );
}

/** The page that shows a new key once (after sign-up, or an invite that made an account). */
/** Where a new account's Default key is shown once after sign-up or an accepted invite (post/redirect/get). */
export const WELCOME_PATH = "/console/welcome";
/** The session flash kind holding that key until the welcome page reads it. */
export const WELCOME_KEY = "welcome-key";
export type WelcomeFlash = { key: string; heading: "Welcome to gengate" | "Your account is ready" };

/**
 * The answer to a sign-up or an invite that made an account: the new session keeps the key as its
 * one-time flash and the browser goes to the welcome page (303, with the cookie), so reloading that
 * page repeats nothing and shows the key no more.
 */
export async function welcomeRedirect(
  kit: KitFor,
  created: NewSession,
  flash: WelcomeFlash,
): Promise<Response> {
  await kit.people.sessions.setFlash(created.session.sessionId, WELCOME_KEY, flash);
  return withCookie(kit, redirect(WELCOME_PATH), created);
}

/** The welcome page: the Default key once, or (reloaded) that it was shown. */
export async function welcomePage(
  kit: KitFor,
  session: ConsoleSession,
  flash: WelcomeFlash | null,
): Promise<SafeHtml> {
  const heading = flash?.heading ?? "Welcome to gengate";
  const shown = flash
    ? html`<p class="notice warn" role="status">This is your account's Default API key. Copy it now: it is shown only once, and
cannot be shown again (you can always create another on the Keys page).</p>
<div class="stack">
  <label for="new-key">New key</label>
  <div class="copy-row">
    <input id="new-key" type="text" readonly value="${flash.key}" autocomplete="off" spellcheck="false">
    <button type="button" class="secondary" data-copy="new-key" hidden>Copy</button>
  </div>
</div>`
    : html`<p class="notice" role="status">Your Default key was shown once and cannot be shown again. You can create another on the <a href="/console/keys">Keys</a> page.</p>`;
  return await kit.layoutFor(session, {
    title: heading,
    active: null,
    body: html`<h1>${heading}</h1>
${shown}
<p><a class="button" href="/console">Continue to Overview</a></p>`,
  });
}

export function withCookie(kit: KitFor, res: Response, created: NewSession): Response {
  res.headers.append(
    "set-cookie",
    sessionCookie(created.token, created.expiresAt, Date.now() / 1000, kit.secure),
  );
  return res;
}

export function signupMode(kit: KitFor) {
  return kit.ctx.live.console.signup;
}

/** Messages the people service wrote for the person (validation, invite problems) are shown as is. */
export function shownMessage(err: unknown): string | null {
  if (!(err instanceof DomainError)) return null;
  const shown = ["validation_error", "unauthorized", "conflict", "not_found", "expired", "forbidden"];
  return shown.includes(err.code) ? err.message : null;
}

/** The status a form re-rendered with a service's error answers with. */
export function statusOf(err: unknown): number {
  return err instanceof DomainError ? httpStatus(err.code) : 400;
}

export function tokenParam(c: PublicPageContext): string {
  const token = c.params.token ?? "";
  if (!/^[A-Za-z0-9_-]{8,200}$/.test(token)) {
    throw new DomainError("not_found", LINK_INVALID);
  }
  return token;
}

export function signupPage(
  kit: KitFor,
  s: { email?: string; invite?: string; error?: string | null; askCode?: boolean },
): SafeHtml {
  const mode = signupMode(kit);
  if (mode === "closed") {
    return narrowPage(
      "Sign up",
      html`<h1>Sign up</h1>
<p class="notice" role="status">Sign-up is closed on this server. Ask the operator for an invite link.</p>
<p><a href="/console/login">Sign in</a></p>`,
    );
  }
  return narrowPage(
    "Sign up",
    html`<h1>Sign up</h1>
${formError(s.error)}
<form class="stack" method="post" action="/console/signup">
  <label>Email <input type="email" name="email" value="${s.email ?? ""}" autocomplete="username" required maxlength="320"></label>
  <label>Password
    <input type="password" name="password" aria-describedby="password-hint" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="1024"></label>
  ${passwordHint()}
  ${
    mode === "invite"
      ? html`<label>Invite code <span class="hint">From the operator or an account owner.</span>
    <input name="invite" value="${s.invite ?? ""}" autocomplete="off" required maxlength="200"></label>`
      : null
  }
  ${s.askCode ? codeField() : null}
  <button type="submit">Sign up</button>
</form>
<p>Already have an account? <a href="/console/login">Sign in</a></p>`,
  );
}

export function invitePage(
  token: string,
  info: { email: string | null; accountName: string | null; role: string; personExists: boolean },
  error: string | null,
  email: string,
  askCode = false,
): SafeHtml {
  const what = info.accountName
    ? html`You are invited to the account <strong>${info.accountName}</strong> as ${info.role === "owner" ? "an owner" : "a member"}.`
    : html`You are invited to gengate.`;
  return narrowPage(
    "Accept invite",
    html`<h1>Accept invite</h1>
<p>${what}${info.email ? html` Email: <strong>${info.email}</strong>.` : null}</p>
${formError(error)}
<form class="stack" method="post" action="/console/invite/${token}">
  ${
    info.email === null
      ? html`<label>Email <input type="email" name="email" value="${email}" autocomplete="username" required maxlength="320"></label>`
      : null
  }
  ${
    info.personExists
      ? html`<label>Password
    <input type="password" name="password" aria-describedby="password-hint" autocomplete="current-password" required maxlength="1024"></label>
  <span class="hint field-hint" id="password-hint">You already have a sign-in: enter your current password.</span>
  ${askCode ? codeField() : null}
  <button type="submit">Accept invite</button>`
      : html`<label>Password
    <input type="password" name="password" aria-describedby="password-hint" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="1024"></label>
  ${passwordHint()}
  <button type="submit">Set password</button>`
  }
</form>`,
  );
}

export function resetPage(token: string, error: string | null): SafeHtml {
  return narrowPage(
    "Set a new password",
    html`<h1>Set a new password</h1>
${formError(error)}
<form class="stack" method="post" action="/console/reset/${token}">
  <label>Password
    <input type="password" name="password" aria-describedby="password-hint" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="1024"></label>
  ${passwordHint()}
  <button type="submit">Set password</button>
</form>
<p class="hint">Setting a new password signs you out everywhere.</p>`,
  );
}

export function forgotPage(sent: boolean, mail: boolean): SafeHtml {
  const how = mail
    ? html`<p>Enter the email you sign in with: if it belongs to an account, a one-time reset link is sent
to it (valid 1 hour). No mail after a few minutes? Check the spam folder, or ask the operator.</p>`
    : html`<p>This server does not send email. Ask the operator for a reset link: they can make one
with <code>gengate user reset-password --email you@example.com</code>.</p>`;
  const answer = mail
    ? "If an account uses that email, a reset link is on its way to it."
    : "If an account uses that email, a reset link can be made for it.";
  return narrowPage(
    "Forgot password",
    sent
      ? html`<h1>Forgot password</h1>
<p class="notice" role="status">${answer}</p>
${how}
<p><a href="/console/login">Back to sign in</a></p>`
      : html`<h1>Forgot password</h1>
${how}
<form class="stack" method="post" action="/console/forgot">
  <label>Email <input type="email" name="email" autocomplete="username" required maxlength="320"></label>
  <button type="submit">Continue</button>
</form>
<p><a href="/console/login">Back to sign in</a></p>`,
  );
}
