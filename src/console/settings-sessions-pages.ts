/**
 * The security page's sessions: sign out the other sessions, every session (this one too), or one.
 * Thin: call the SessionService (src/people/sessions.ts), then redirect (303); ending this
 * browser's own session clears its cookie and goes to sign-in.
 */
import { Elysia } from "elysia";
import { type ActionContext, type ConsoleKit, redirect } from "./kit.ts";
import { clearedSessionCookie } from "./security.ts";
import { idParam, SECURITY_PATH } from "./settings-shared.ts";

async function signOutOthers(kit: ConsoleKit, c: ActionContext) {
  await kit.people.sessions.signOutEverywhere(c.session.personId, c.session.sessionId);
  return redirect(`${SECURITY_PATH}?done=others`);
}

async function signOutEverywhere(kit: ConsoleKit, c: ActionContext) {
  await kit.people.sessions.signOutEverywhere(c.session.personId);
  return redirect("/console/login", { "set-cookie": clearedSessionCookie(kit.secure) });
}

async function revokeSession(kit: ConsoleKit, c: ActionContext) {
  const sessionId = idParam(c.params, "sessionId", "session");
  await kit.people.sessions.revokeSession(c.session.personId, sessionId);
  if (sessionId === c.session.sessionId)
    return redirect("/console/login", { "set-cookie": clearedSessionCookie(kit.secure) });
  return redirect(`${SECURITY_PATH}?done=session`);
}

export function settingsSessionsPages(kit: ConsoleKit) {
  return new Elysia()
    .post(
      `${SECURITY_PATH}/sessions/revoke-others`,
      kit.action((c) => signOutOthers(kit, c)),
    )
    .post(
      `${SECURITY_PATH}/sessions/revoke-all`,
      kit.action((c) => signOutEverywhere(kit, c)),
    )
    .post(
      `${SECURITY_PATH}/sessions/:sessionId/revoke`,
      kit.action((c) => revokeSession(kit, c)),
    );
}
