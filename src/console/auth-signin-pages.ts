/**
 * Sign-in (with the two-factor step) and the signed-in actions of the frame: sign-out and the
 * account switch. Thin: parse the form, call the people services (src/people/sign-in.ts,
 * sessions.ts), then set the cookie and redirect (303) or render the form with its error.
 */
import { Elysia } from "elysia";
import { errorHeaders } from "../http/errors.ts";
import { DomainError } from "../lib/errors.ts";
import { loginPage, SIGN_IN_FAILED, signupMode, withCookie } from "./auth-views.ts";
import {
  type ActionContext,
  type ConsoleKit,
  field,
  htmlResponse,
  type PublicActionContext,
  type PublicPageContext,
  redirect,
} from "./kit.ts";
import { clearedSessionCookie, safeNext } from "./security.ts";

function showLogin(kit: ConsoleKit, c: PublicPageContext) {
  const next = safeNext(c.url.searchParams.get("next"));
  if (c.session) return redirect(next ?? "/console");
  const notice = c.url.searchParams.get("done") === "reset" ? "Your password is set. Sign in with it." : null;
  return loginPage({ next, notice, signupOpen: signupMode(kit) !== "closed" });
}

/** A missing second factor asks for it (200); a wrong one, a wrong password or too many tries re-render. */
async function signIn(kit: ConsoleKit, c: PublicActionContext) {
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
}

async function signOut(kit: ConsoleKit, c: ActionContext) {
  await kit.people.sessions.signOut(c.session.sessionId);
  return redirect("/console/login", { "set-cookie": clearedSessionCookie(kit.secure) });
}

async function switchAccount(kit: ConsoleKit, c: ActionContext) {
  const accountId = field(c.form, "account");
  await kit.people.sessions.switchAccount(c.session.sessionId, c.session.personId, accountId);
  return redirect("/console");
}

export function authSignInPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/login",
      kit.publicPage((c) => showLogin(kit, c)),
    )
    .post(
      "/console/login",
      kit.publicAction((c) => signIn(kit, c)),
    )
    .post(
      "/console/logout",
      kit.action((c) => signOut(kit, c)),
    )
    .post(
      "/console/account",
      kit.action((c) => switchAccount(kit, c)),
    );
}
