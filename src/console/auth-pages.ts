/**
 * The signed-out pages: sign-in with the two-factor step and the signed-in actions sign-out and
 * account switch (auth-signin-pages.ts), sign-up with the Default key shown once
 * (auth-signup-pages.ts), invites (auth-invite-pages.ts), password reset and "forgot password"
 * (auth-reset-pages.ts); their HTML is auth-views.ts.
 */
import { Elysia } from "elysia";
import { authInvitePages } from "./auth-invite-pages.ts";
import { authResetPages } from "./auth-reset-pages.ts";
import { authSignInPages } from "./auth-signin-pages.ts";
import { authSignUpPages } from "./auth-signup-pages.ts";
import type { ConsoleKit } from "./kit.ts";

export function authPages(kit: ConsoleKit) {
  return new Elysia()
    .use(authSignInPages(kit))
    .use(authSignUpPages(kit))
    .use(authInvitePages(kit))
    .use(authResetPages(kit));
}
