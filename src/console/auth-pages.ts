/**
 * The signed-out pages: sign-in (with the two-factor step), sign-up (the Default key shown once),
 * invite, password reset, "forgot password", and the signed-in actions sign-out and account switch.
 * Thin: parse the form, call the PeopleService, render or redirect (303).
 */
import { Elysia } from "elysia";
import { errorHeaders, httpStatus } from "../http/errors.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import type { NewSession } from "../people/types.ts";
import { PASSWORD_MIN_LENGTH } from "../people/types.ts";
import { type ConsoleKit, field, formError, htmlResponse, type PublicPageContext, redirect } from "./kit.ts";
import { layout } from "./layout.ts";
import { clearedSessionCookie, safeNext, sessionCookie } from "./security.ts";

const SIGN_IN_FAILED = "The email or password is not right.";
const LINK_INVALID = "This link is not valid, was already used, or has expired. Ask for a new one.";

function narrowPage(title: string, body: SafeHtml): SafeHtml {
  return layout({ title, body, session: null, narrow: true });
}

function nextField(next: string | null): SafeHtml {
  return html`${next ? html`<input type="hidden" name="next" value="${next}">` : null}`;
}

/** The second factor, asked again on forms where an existing person proves who they are. */
function codeField(): SafeHtml {
  return html`<label>Two-factor code
    <span class="hint">The 6-digit code from your authenticator app, or one of your recovery codes.</span>
    <input name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="64"></label>`;
}

/**
 * The rule under a new-password field: outside its <label>, so the field's label is exactly
 * `Password` (CONSOLE.md; playwright's getByLabel matches the label's text), tied by aria-describedby.
 */
function passwordHint(): SafeHtml {
  return html`<span class="hint field-hint" id="password-hint">At least ${PASSWORD_MIN_LENGTH} characters.</span>`;
}

interface LoginState {
  email?: string;
  next: string | null;
  error?: string | null;
  notice?: string | null;
  /** The two-factor step: the right password was given, now the code. */
  twoFactor?: { password: string } | null;
  signupOpen: boolean;
}

function loginPage(s: LoginState): SafeHtml {
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
async function newKeyPage(
  kit: ConsoleKit,
  created: NewSession,
  key: string,
  heading: string,
): Promise<SafeHtml> {
  return await kit.layoutFor(created.session, {
    title: heading,
    active: null,
    body: html`<h1>${heading}</h1>
<p class="notice warn" role="status">This is your account's Default API key. Copy it now: it is shown only once, and
cannot be shown again (you can always create another on the Keys page).</p>
<div class="stack">
  <label for="new-key">New key</label>
  <div class="copy-row">
    <input id="new-key" type="text" readonly value="${key}" autocomplete="off" spellcheck="false">
    <button type="button" class="secondary" data-copy="new-key" hidden>Copy</button>
  </div>
</div>
<p><a class="button" href="/console">Continue to Overview</a></p>`,
  });
}

function withCookie(kit: ConsoleKit, res: Response, created: NewSession): Response {
  res.headers.append(
    "set-cookie",
    sessionCookie(created.token, created.expiresAt, Date.now() / 1000, kit.secure),
  );
  return res;
}

function signupMode(kit: ConsoleKit) {
  return kit.ctx.live.console.signup;
}

/** Messages the people service wrote for the person (validation, invite problems) are shown as is. */
function shownMessage(err: unknown): string | null {
  if (!(err instanceof DomainError)) return null;
  const shown = ["validation_error", "unauthorized", "conflict", "not_found", "expired", "forbidden"];
  return shown.includes(err.code) ? err.message : null;
}

/** The status a form re-rendered with a service's error answers with. */
function statusOf(err: unknown): number {
  return err instanceof DomainError ? httpStatus(err.code) : 400;
}

function tokenParam(c: PublicPageContext): string {
  const token = c.params.token ?? "";
  if (!/^[A-Za-z0-9_-]{8,200}$/.test(token)) {
    throw new DomainError("not_found", LINK_INVALID);
  }
  return token;
}

export function authPages(kit: ConsoleKit) {
  return (
    new Elysia()
      // ---- sign-in
      .get(
        "/console/login",
        kit.publicPage((c) => {
          const next = safeNext(c.url.searchParams.get("next"));
          if (c.session) return redirect(next ?? "/console");
          const notice =
            c.url.searchParams.get("done") === "reset" ? "Your password is set. Sign in with it." : null;
          return loginPage({ next, notice, signupOpen: signupMode(kit) !== "closed" });
        }),
      )
      .post(
        "/console/login",
        kit.publicAction(async (c) => {
          const email = field(c.form, "email").trim();
          const password = field(c.form, "password");
          const code = field(c.form, "code").trim();
          const next = safeNext(field(c.form, "next"));
          const signupOpen = signupMode(kit) !== "closed";
          try {
            const created = await kit.people.signIn.signIn({ email, password, code: code || null }, c.client);
            return withCookie(kit, redirect(next ?? "/console"), created);
          } catch (err) {
            if (!(err instanceof DomainError)) throw err;
            if (err.code === "unauthorized" && err.param === "code") {
              return htmlResponse(
                loginPage({
                  email,
                  next,
                  signupOpen,
                  twoFactor: { password },
                  error: code ? "That code is not right, or it was already used." : null,
                }),
                code ? 401 : 200,
              );
            }
            if (err.code === "unauthorized") {
              return htmlResponse(loginPage({ email, next, signupOpen, error: SIGN_IN_FAILED }), 401);
            }
            if (err.code === "rate_limited") {
              return htmlResponse(
                loginPage({
                  email,
                  next,
                  signupOpen,
                  error: "Too many failed sign-in attempts. Wait a few minutes, then try again.",
                }),
                429,
                errorHeaders(err),
              );
            }
            if (err.code === "validation_error") {
              return htmlResponse(loginPage({ email, next, signupOpen, error: SIGN_IN_FAILED }), 401);
            }
            throw err;
          }
        }),
      )
      // ---- sign-up
      .get(
        "/console/signup",
        kit.publicPage((c) => {
          if (c.session) return redirect("/console");
          return signupPage(kit, { invite: c.url.searchParams.get("invite") ?? "" });
        }),
      )
      .post(
        "/console/signup",
        kit.publicAction(async (c) => {
          const mode = signupMode(kit);
          const email = field(c.form, "email").trim();
          const invite = field(c.form, "invite").trim();
          if (mode === "closed") {
            return htmlResponse(signupPage(kit, {}), 403);
          }
          try {
            const made = await kit.people.signIn.signUp(
              {
                email,
                password: field(c.form, "password"),
                invite: mode === "invite" ? invite : null,
                code: field(c.form, "code").trim() || null,
              },
              c.client,
            );
            return withCookie(
              kit,
              htmlResponse(await newKeyPage(kit, made.session, made.key, "Your account is ready")),
              made.session,
            );
          } catch (err) {
            const message = shownMessage(err);
            if (message === null) throw err;
            const askCode = err instanceof DomainError && err.param === "code";
            return htmlResponse(signupPage(kit, { email, invite, error: message, askCode }), statusOf(err));
          }
        }),
      )
      // ---- invites
      .get(
        "/console/invite/:token",
        kit.publicPage(async (c) => {
          const token = tokenParam(c);
          const info = await kit.people.invites.inviteInfo(token);
          if (!info) throw new DomainError("not_found", LINK_INVALID);
          return invitePage(token, info, null, "");
        }),
      )
      .post(
        "/console/invite/:token",
        kit.publicAction(async (c) => {
          const token = tokenParam(c);
          const info = await kit.people.invites.inviteInfo(token);
          if (!info) throw new DomainError("not_found", LINK_INVALID);
          const email = field(c.form, "email").trim();
          try {
            const accepted = await kit.people.signIn.acceptInvite(
              token,
              field(c.form, "password"),
              c.client,
              info.email === null ? email : null,
              field(c.form, "code").trim() || null,
            );
            if (accepted.key) {
              return withCookie(
                kit,
                htmlResponse(await newKeyPage(kit, accepted.session, accepted.key, "Welcome to gengate")),
                accepted.session,
              );
            }
            return withCookie(kit, redirect("/console"), accepted.session);
          } catch (err) {
            const message = err instanceof DomainError && err.code !== "not_found" ? shownMessage(err) : null;
            if (message === null) throw err;
            const askCode = err instanceof DomainError && err.param === "code";
            return htmlResponse(
              invitePage(token, info, message, email, askCode),
              askCode ? 401 : statusOf(err),
            );
          }
        }),
      )
      // ---- password reset
      .get(
        "/console/reset/:token",
        kit.publicPage(async (c) => {
          const token = tokenParam(c);
          if (!(await kit.people.resets.resetLinkValid(token)))
            throw new DomainError("not_found", LINK_INVALID);
          return resetPage(token, null);
        }),
      )
      .post(
        "/console/reset/:token",
        kit.publicAction(async (c) => {
          const token = tokenParam(c);
          try {
            await kit.people.resets.resetPassword(token, field(c.form, "password"));
          } catch (err) {
            if (err instanceof DomainError && err.code === "validation_error") {
              return htmlResponse(resetPage(token, err.message), 400);
            }
            throw err;
          }
          // Every session of the person ended with the reset, this browser's too.
          return redirect("/console/login?done=reset", { "set-cookie": clearedSessionCookie(kit.secure) });
        }),
      )
      // ---- forgotten password
      .get(
        "/console/forgot",
        kit.publicPage(() => forgotPage(false, kit.ctx.mailer.enabled())),
      )
      .post(
        "/console/forgot",
        // With [smtp] a known person gets a reset link by email; without it nothing is created (a
        // link nobody receives would only be a live secret). The answer is the same for every email.
        kit.publicAction(async (c) => {
          const mail = kit.ctx.mailer.enabled();
          await kit.people.resets.forgotPassword(field(c.form, "email").slice(0, 320));
          return forgotPage(true, mail);
        }),
      )
      // ---- signed-in actions of the frame
      .post(
        "/console/logout",
        kit.action(async (c) => {
          await kit.people.sessions.signOut(c.session.sessionId);
          return redirect("/console/login", { "set-cookie": clearedSessionCookie(kit.secure) });
        }),
      )
      .post(
        "/console/account",
        kit.action(async (c) => {
          const accountId = field(c.form, "account");
          await kit.people.sessions.switchAccount(c.session.sessionId, c.session.personId, accountId);
          return redirect("/console");
        }),
      )
  );
}

function signupPage(
  kit: ConsoleKit,
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

function invitePage(
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

function resetPage(token: string, error: string | null): SafeHtml {
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

function forgotPage(sent: boolean, mail: boolean): SafeHtml {
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
