/**
 * Invite links (/console/invite/:token): the invite, then a new person sets a password or an
 * existing one gives theirs (and a two-factor code when on). Thin: InviteService.inviteInfo and
 * SignInService.acceptInvite (src/people/), then the cookie; when the invite made an account, a
 * redirect to the welcome page (/console/welcome), which shows its Default key once (post/redirect/get).
 */
import { Elysia } from "elysia";
import { DomainError } from "../lib/errors.ts";
import {
  invitePage,
  LINK_INVALID,
  shownMessage,
  statusOf,
  tokenParam,
  WELCOME_KEY,
  WELCOME_PATH,
  type WelcomeFlash,
  welcomePage,
  welcomeRedirect,
  withCookie,
} from "./auth-views.ts";
import {
  type ConsoleKit,
  field,
  htmlResponse,
  type PageContext,
  type PublicActionContext,
  type PublicPageContext,
  redirect,
} from "./kit.ts";

async function showInvite(kit: ConsoleKit, c: PublicPageContext) {
  const token = tokenParam(c);
  const info = await kit.people.invites.inviteInfo(token);
  if (!info) throw new DomainError("not_found", LINK_INVALID);
  return invitePage(token, info, null, "");
}

async function acceptInvite(kit: ConsoleKit, c: PublicActionContext) {
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
    if (accepted.key)
      return await welcomeRedirect(kit, accepted.session, {
        key: accepted.key,
        heading: "Welcome to gengate",
      });
    return withCookie(kit, redirect("/console"), accepted.session);
  } catch (err) {
    const message = err instanceof DomainError && err.code !== "not_found" ? shownMessage(err) : null;
    if (message === null) throw err;
    const askCode = err instanceof DomainError && err.param === "code";
    return htmlResponse(invitePage(token, info, message, email, askCode), askCode ? 401 : statusOf(err));
  }
}

/** The welcome page a sign-up or an accepted invite redirects to: the Default key once (the flash). */
async function showWelcome(kit: ConsoleKit, c: PageContext) {
  const flash = await kit.people.sessions.takeFlash<WelcomeFlash>(c.session.sessionId, WELCOME_KEY);
  return await welcomePage(kit, c.session, flash);
}

export function authInvitePages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      WELCOME_PATH,
      kit.page((c) => showWelcome(kit, c)),
    )
    .get(
      "/console/invite/:token",
      kit.publicPage((c) => showInvite(kit, c)),
    )
    .post(
      "/console/invite/:token",
      kit.publicAction((c) => acceptInvite(kit, c)),
    );
}
