/**
 * The signed-in person's security settings (/console/settings/security): the page, the password
 * change and two-factor (set up, confirm with a code and show the recovery codes once, turn off).
 * Thin: parse the form, call the people services (src/people/resets.ts, two-factor.ts), then
 * redirect (303) or render the page with the refusal in its section.
 */
import { Elysia } from "elysia";
import { type ActionContext, type ConsoleKit, field, type PageContext, redirect } from "./kit.ts";
import { pendingSetup, securityError, securityPage } from "./settings-security-view.ts";
import { SECURITY_PATH } from "./settings-shared.ts";

async function showSecurity(kit: ConsoleKit, c: PageContext) {
  // A set-up begun and not confirmed is shown again with the same secret (until Cancel set-up).
  return await securityPage(kit, c, { setup: c.session.twoFactor ? null : await pendingSetup(kit, c) });
}

async function changePassword(kit: ConsoleKit, c: ActionContext) {
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
}

async function beginTwoFactor(kit: ConsoleKit, c: ActionContext) {
  try {
    return await securityPage(kit, c, {
      setup: await kit.people.twoFactor.beginTwoFactor(c.session.personId),
    });
  } catch (err) {
    return securityError(kit, c, "two-factor", err);
  }
}

async function enableTwoFactor(kit: ConsoleKit, c: ActionContext) {
  try {
    const { recoveryCodes } = await kit.people.twoFactor.enableTwoFactor(
      c.session.personId,
      field(c.form, "code").trim(),
    );
    return await securityPage(kit, { ...c, session: { ...c.session, twoFactor: true } }, { recoveryCodes });
  } catch (err) {
    return securityError(kit, c, "two-factor", err, { setup: await pendingSetup(kit, c) });
  }
}

async function cancelTwoFactor(kit: ConsoleKit, c: ActionContext) {
  await kit.people.twoFactor.cancelTwoFactor(c.session.personId);
  return redirect(`${SECURITY_PATH}?done=two-factor-cancelled`);
}

async function disableTwoFactor(kit: ConsoleKit, c: ActionContext) {
  try {
    await kit.people.twoFactor.disableTwoFactor(c.session.personId, field(c.form, "password"));
  } catch (err) {
    return securityError(kit, c, "two-factor", err);
  }
  return redirect(`${SECURITY_PATH}?done=two-factor-off`);
}

export function settingsSecurityPages(kit: ConsoleKit) {
  return new Elysia()
    .get(
      SECURITY_PATH,
      kit.page((c) => showSecurity(kit, c)),
    )
    .post(
      `${SECURITY_PATH}/password`,
      kit.action((c) => changePassword(kit, c)),
    )
    .post(
      `${SECURITY_PATH}/two-factor/begin`,
      kit.action((c) => beginTwoFactor(kit, c)),
    )
    .post(
      `${SECURITY_PATH}/two-factor/enable`,
      kit.action((c) => enableTwoFactor(kit, c)),
    )
    .post(
      `${SECURITY_PATH}/two-factor/cancel`,
      kit.action((c) => cancelTwoFactor(kit, c)),
    )
    .post(
      `${SECURITY_PATH}/two-factor/disable`,
      kit.action((c) => disableTwoFactor(kit, c)),
    );
}
