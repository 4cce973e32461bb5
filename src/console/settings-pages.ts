/**
 * Settings (/console/settings): two pages with an in-page navigation (settings-shared.ts).
 *
 *   /console/settings           the account: members (settings-members-pages.ts), the webhook
 *                               signing secret and the low-balance alert (settings-account-pages.ts),
 *                               rendered by settings-account-view.ts
 *   /console/settings/security  the signed-in person: password and two-factor
 *                               (settings-security-pages.ts), sessions (settings-sessions-pages.ts),
 *                               rendered by settings-security-view.ts
 */
import { Elysia } from "elysia";
import type { ConsoleKit } from "./kit.ts";
import { settingsAccountPages } from "./settings-account-pages.ts";
import { settingsMembersPages } from "./settings-members-pages.ts";
import { settingsSecurityPages } from "./settings-security-pages.ts";
import { settingsSessionsPages } from "./settings-sessions-pages.ts";

export function settingsPages(kit: ConsoleKit) {
  return new Elysia()
    .use(settingsMembersPages(kit))
    .use(settingsAccountPages(kit))
    .use(settingsSecurityPages(kit))
    .use(settingsSessionsPages(kit));
}
