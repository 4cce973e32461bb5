/**
 * The web console (/console): one Elysia plugin that mounts the assets, the sign-in pages and one
 * plugin per area. Mounted by src/app/app.ts only when `[console] enabled` is true at start; if a
 * reload turns it off, every console route answers the API's 404 (a restart is needed to turn it on).
 *
 * ## Adding an area (overview, keys, usage, requests, wallet, billing, studio, settings, admin)
 *
 * One file per area, `src/console/<area>-pages.ts`, exporting a function that takes the kit and
 * returns an Elysia instance with that area's routes; then ONE line below, `.use(<area>Pages(kit))`.
 * Nothing else in the shell changes. Example:
 *
 *   import { Elysia } from "elysia";
 *   import { html } from "../lib/html.ts";
 *   import { csrfField } from "./layout.ts";
 *   import { type ConsoleKit, field, redirect, requireAccount, requireOwner } from "./kit.ts";
 *   import { formatMoney } from "./format.ts";
 *
 *   export function keysPages(kit: ConsoleKit) {
 *     return new Elysia()
 *       .get("/console/keys", kit.page(async (c) => {
 *         const s = requireAccount(c.session);            // 403 page when the person has no account
 *         const keys = await kit.ctx.accounts.listKeys(s.accountId);   // every store method is async
 *         return await c.layout({ title: "Keys", active: "keys", body: html`<h1>Keys</h1>...` });
 *       }))
 *       .post("/console/keys", kit.action(async (c) => {  // Origin + CSRF already checked
 *         const s = requireOwner(c.session);              // 403 page for a member
 *         await kit.ctx.accounts.createKey(s.accountId, { name: field(c.form, "name") });
 *         return redirect("/console/keys");               // 303, the page works without JS
 *       }));
 *   }
 *
 * Rules: every form carries `${csrfField(c.session)}` and posts to a kit.action route; a record of
 * another account is `throw new DomainError("not_found", ...)` (an HTML 404 page); every value goes
 * through `html` (never `raw` with data); no inline script or style (CSP): behaviour via the data-*
 * attributes of client/app.js, styles in client/console.css.
 */
import { Elysia } from "elysia";
import { errorResponse } from "../http/errors.ts";
import { DomainError } from "../lib/errors.ts";
import type { ConsoleSession } from "../people/types.ts";
import type { AppContext } from "../server/context.ts";
import { adminCodesPages } from "./admin-codes-pages.ts";
import { adminMailPages } from "./admin-mail-pages.ts";
import { adminOrdersPages } from "./admin-orders-pages.ts";
import { adminPages } from "./admin-pages.ts";
import { serveAsset } from "./assets.ts";
import { authPages } from "./auth-pages.ts";
import { billingCheckoutPages } from "./billing-checkout-pages.ts";
import { billingPages } from "./billing-pages.ts";
import { billingRedeemPages } from "./billing-redeem-pages.ts";
import { keysPages } from "./keys-pages.ts";
import { consoleKit, type RouteContext, redirect } from "./kit.ts";
import { overviewPages } from "./overview-pages.ts";
import { receiptPages } from "./receipts-pages.ts";
import { requestsPages } from "./requests-pages.ts";
import { isSafeMethod, safeNext, withSecurityHeaders } from "./security.ts";
import { settingsPages } from "./settings-pages.ts";
import { studioChatPages } from "./studio-chat-pages.ts";
import { studioPages } from "./studio-pages.ts";
import { studioRunPages } from "./studio-run-pages.ts";
import { usagePages } from "./usage-pages.ts";
import { walletPages } from "./wallet-pages.ts";

export function consoleRoutes(ctx: AppContext) {
  const kit = consoleKit(ctx);
  // Unknown console paths: an HTML 404 (the API's JSON 404 stays outside /console). A signed-out
  // GET is sent to sign-in first, like every page, so the console's map is not shown to strangers.
  const notFound = async (c: RouteContext): Promise<Response> => {
    const { request } = c;
    if (!ctx.live.console.enabled) return errorResponse(new DomainError("not_found", "No such route."));
    let session: ConsoleSession | null = null;
    try {
      session = await kit.session(request, { ip: null, userAgent: null });
    } catch {}
    const url = new URL(request.url);
    if (!session && isSafeMethod(request.method) && !url.pathname.startsWith("/console/assets/")) {
      const next = safeNext(url.pathname + url.search);
      return withSecurityHeaders(
        redirect(next ? `/console/login?next=${encodeURIComponent(next)}` : "/console/login"),
      );
    }
    const err = new DomainError("not_found", `There is no console page at ${url.pathname}.`);
    return withSecurityHeaders(await kit.errorPage(err, request, session));
  };
  return (
    new Elysia({ detail: { hide: true } })
      .get("/console/assets/:file", async (c) => {
        const res = serveAsset(c.request, `/console/assets/${c.params.file}`);
        return res ?? (await notFound(c));
      })
      .use(authPages(kit))
      // Areas: one line each (see above).
      .use(settingsPages(kit))
      .use(overviewPages(kit))
      .use(keysPages(kit))
      .use(usagePages(kit))
      .use(walletPages(kit))
      .use(billingPages(kit))
      .use(billingRedeemPages(kit))
      .use(billingCheckoutPages(kit))
      .use(receiptPages(kit))
      .use(requestsPages(kit))
      .use(studioRunPages(kit))
      .use(studioChatPages(kit))
      .use(studioPages(kit))
      .use(adminPages(kit))
      .use(adminCodesPages(kit))
      .use(adminMailPages(kit))
      .use(adminOrdersPages(kit))
      .all("/console/*", notFound)
  );
}

/**
 * The front door: `/` leads to the console (which sends a signed-out visitor on to its sign-in), or
 * to /docs when the console is off (not mounted at start, or turned off by a reload).
 */
export function frontDoorRoutes(ctx: AppContext, consoleMounted: boolean) {
  return new Elysia({ detail: { hide: true } }).get(
    "/",
    () =>
      new Response(null, {
        status: 303,
        headers: { location: consoleMounted && ctx.live.console.enabled ? "/console" : "/docs" },
      }),
  );
}
