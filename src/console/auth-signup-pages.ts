/**
 * Sign-up (/console/signup): open, by invite code, or closed (403) per [console] signup; the
 * account's Default key is shown once. Thin: parse the form, call SignInService.signUp
 * (src/people/sign-in.ts), set the cookie or render the form with the service's message.
 */
import { Elysia } from "elysia";
import { DomainError } from "../lib/errors.ts";
import { shownMessage, signupMode, signupPage, statusOf, welcomeRedirect } from "./auth-views.ts";
import {
  type ConsoleKit,
  field,
  htmlResponse,
  type PublicActionContext,
  type PublicPageContext,
  redirect,
} from "./kit.ts";

function showSignUp(kit: ConsoleKit, c: PublicPageContext) {
  if (c.session) return redirect("/console");
  return signupPage(kit, { invite: c.url.searchParams.get("invite") ?? "" });
}

async function signUp(kit: ConsoleKit, c: PublicActionContext) {
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
    return await welcomeRedirect(kit, made.session, { key: made.key, heading: "Your account is ready" });
  } catch (err) {
    const message = shownMessage(err);
    if (message === null) throw err;
    const askCode = err instanceof DomainError && err.param === "code";
    return htmlResponse(signupPage(kit, { email, invite, error: message, askCode }), statusOf(err));
  }
}

export function authSignUpPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/signup",
      kit.publicPage((c) => showSignUp(kit, c)),
    )
    .post(
      "/console/signup",
      kit.publicAction((c) => signUp(kit, c)),
    );
}
