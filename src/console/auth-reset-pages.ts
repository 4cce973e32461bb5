/**
 * Password reset links (/console/reset/:token) and "forgot password" (/console/forgot). Thin:
 * parse the form, call ResetService (src/people/resets.ts), then redirect (303) or render.
 */
import { Elysia } from "elysia";
import { DomainError } from "../lib/errors.ts";
import { forgotPage, LINK_INVALID, resetPage, tokenParam } from "./auth-views.ts";
import {
  type ConsoleKit,
  field,
  htmlResponse,
  type PublicActionContext,
  type PublicPageContext,
  redirect,
} from "./kit.ts";
import { clearedSessionCookie } from "./security.ts";

async function showReset(kit: ConsoleKit, c: PublicPageContext) {
  const token = tokenParam(c);
  if (!(await kit.people.resets.resetLinkValid(token))) throw new DomainError("not_found", LINK_INVALID);
  return resetPage(token, null);
}

async function resetPassword(kit: ConsoleKit, c: PublicActionContext) {
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
}

function showForgot(kit: ConsoleKit) {
  return forgotPage(false, kit.ctx.mailer.enabled());
}

/**
 * With [smtp] a known person gets a reset link by email; without it nothing is created (a link
 * nobody receives would only be a live secret). The answer is the same for every email.
 */
async function forgotPassword(kit: ConsoleKit, c: PublicActionContext) {
  const mail = kit.ctx.mailer.enabled();
  await kit.people.resets.forgotPassword(field(c.form, "email").slice(0, 320));
  return forgotPage(true, mail);
}

export function authResetPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      "/console/reset/:token",
      kit.publicPage((c) => showReset(kit, c)),
    )
    .post(
      "/console/reset/:token",
      kit.publicAction((c) => resetPassword(kit, c)),
    )
    .get(
      "/console/forgot",
      kit.publicPage(() => showForgot(kit)),
    )
    .post(
      "/console/forgot",
      kit.publicAction((c) => forgotPassword(kit, c)),
    );
}
