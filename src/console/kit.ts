/**
 * What every console page module uses: `consoleKit(ctx)` wraps handlers so each one gets the
 * session, the Origin and CSRF checks, the security headers and HTML error pages without repeating
 * them. The pattern for an area (overview, keys, settings...) is in src/console/http.ts.
 *
 *   kit.page(fn)          GET page for a signed-in person (signed out: 303 to /console/login?next=)
 *   kit.action(fn)        state change by a signed-in person: Origin + CSRF checked, form parsed
 *   kit.publicPage(fn)    page anyone may see (sign-in, sign-up...); the session if there is one
 *   kit.publicAction(fn)  state change without a session (sign-in...): Origin checked, form parsed
 *
 * A handler returns a SafeHtml (a whole page: 200 text/html) or a Response (`htmlResponse`,
 * `redirect`), or throws a DomainError: it becomes an HTML error page with the code's status
 * (not_found 404, forbidden 403, rate_limited 429 + Retry-After, validation_error 400).
 */
import { FORM_BODY_MAX, readCapped } from "../http/body-limit.ts";
import { errorHeaders, errorResponse, httpStatus } from "../http/errors.ts";
import { clientAddress } from "../http/request-meta.ts";
import { DomainError } from "../lib/errors.ts";
import { html, type SafeHtml } from "../lib/html.ts";
import { errorFields, log } from "../lib/log.ts";
import { lowPriorityTurn } from "../lib/low-priority.ts";
import type { People } from "../people/service.ts";
import type { ClientInfo, ConsoleSession, Role } from "../people/types.ts";
import type { AppContext } from "../server/context.ts";
import { errorBody, type LayoutPage, layout } from "./layout.ts";
import {
  csrfMatches,
  isSafeMethod,
  safeNext,
  sameOrigin,
  sessionToken,
  withSecurityHeaders,
} from "./security.ts";

/** A session that is looking at an account (accountId and role set). */
export type AccountSession = ConsoleSession & { accountId: string; role: Role };

/** The part of Elysia's handler context the wrappers read. */
export interface RouteContext {
  request: Request;
  params?: unknown;
  /** Elysia's parsed body, used only when Elysia already read the request (outside createApp). */
  body?: unknown;
}

export interface PublicPageContext {
  request: Request;
  url: URL;
  params: Record<string, string>;
  client: ClientInfo;
  /** Null when signed out. */
  session: ConsoleSession | null;
}

export interface PageContext extends PublicPageContext {
  session: ConsoleSession;
  /** The whole page in the signed-in frame (navigation, account switcher, Sign out). */
  layout(page: Omit<LayoutPage, "session" | "accounts">): Promise<SafeHtml>;
}

export interface PublicActionContext extends PublicPageContext {
  /** The submitted form (urlencoded or multipart). */
  form: Form;
}

export interface ActionContext extends PageContext {
  form: Form;
}

/** A submitted form (urlencoded or multipart), as Request.formData() gives it. */
export type Form = Awaited<ReturnType<Request["formData"]>>;

type Result = SafeHtml | Response;
type Handler<C> = (c: C) => Result | Promise<Result>;

/** A string field of a form ("" when absent or a file). */
export function field(form: { get(name: string): unknown }, name: string): string {
  const v = form.get(name);
  return typeof v === "string" ? v : "";
}

/** An HTML response (the security headers are added by the wrappers). */
export function htmlResponse(body: SafeHtml, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(body.value, {
    status,
    headers: { "content-type": "text/html; charset=utf-8", ...headers },
  });
}

/** 303 See Other: after every successful form post, and for signed-out visitors. */
export function redirect(location: string, headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { location, ...headers } });
}

/** Whether the request was made by htmx (the page may answer a fragment). */
export function isHtmx(request: Request): boolean {
  return request.headers.get("hx-request") === "true";
}

/** The session's account, or 403 when the person belongs to no account. */
export function requireAccount(session: ConsoleSession): AccountSession {
  if (session.accountId === null || session.role === null) {
    throw new DomainError(
      "forbidden",
      "You are not a member of any account in use (an operator may have disabled yours). Ask an owner or the operator for an invite.",
    );
  }
  return session as AccountSession;
}

/** Owner-only pages and actions: a member gets 403. */
export function requireOwner(session: ConsoleSession): AccountSession {
  const s = requireAccount(session);
  if (s.role !== "owner") throw new DomainError("forbidden", "Only an owner of this account can do this.");
  return s;
}

/** Operator pages: anyone else gets 403. */
export function requireOperator(session: ConsoleSession): ConsoleSession {
  if (!session.operator) throw new DomainError("forbidden", "Only an operator can see this page.");
  return session;
}

/** What the kit itself reads: the public URL, live settings, sessions and the checkout origins. */
export type ConsoleKitDeps = Pick<AppContext, "publicUrl" | "live" | "people" | "payments">;

/**
 * A kit whose `ctx` holds only what a helper or view reads (`KitFor<"accounts" | "mailer">`), so its
 * signature says what it uses; a route group's whole kit passes for it.
 */
export type KitFor<K extends keyof AppContext = never> = ConsoleKit<ConsoleKitDeps & Pick<AppContext, K>>;

/**
 * `C`: the context the page modules' route groups read as `kit.ctx` (src/console/http.ts passes the
 * app's: route groups are the edge, their helpers and views take declared deps).
 */
export interface ConsoleKit<C extends ConsoleKitDeps = AppContext> {
  ctx: C;
  readonly people: People;
  /** The public URL's origin (what Origin must equal). */
  origin: string;
  /** Whether cookies get `Secure` (public URL is https). */
  secure: boolean;
  page(handler: Handler<PageContext>): (c: RouteContext) => Promise<Response>;
  action(handler: Handler<ActionContext>): (c: RouteContext) => Promise<Response>;
  publicPage(handler: Handler<PublicPageContext>): (c: RouteContext) => Promise<Response>;
  publicAction(handler: Handler<PublicActionContext>): (c: RouteContext) => Promise<Response>;
  /** The session of a request (cookie only; an Authorization header is never looked at). */
  session(request: Request, client: ClientInfo): Promise<ConsoleSession | null>;
  /** An HTML error page for a DomainError (or anything thrown), in the frame the session calls for. */
  errorPage(err: unknown, request: Request, session: ConsoleSession | null): Promise<Response>;
  /** The signed-in frame for a session (used by PageContext.layout). */
  layoutFor(session: ConsoleSession, page: Omit<LayoutPage, "session" | "accounts">): Promise<SafeHtml>;
}

const FORM_TYPES = ["application/x-www-form-urlencoded", "multipart/form-data"];

async function readForm(request: Request, parsed: unknown): Promise<Form> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  const form = new FormData() as unknown as Form;
  if (!FORM_TYPES.includes(type)) return form;
  if (request.bodyUsed) {
    // createApp's parse hook leaves form bodies unread; a bare Elysia (a test) has parsed it already.
    if (parsed && typeof parsed === "object") {
      for (const [k, v] of Object.entries(parsed)) {
        for (const item of Array.isArray(v) ? v : [v])
          form.append(k, item instanceof Blob ? item : String(item));
      }
    }
    return form;
  }
  // Read with the cap (Content-Length first, then counted while streaming), never request.formData(),
  // which buffers whatever the client sends.
  let bytes: Uint8Array;
  try {
    bytes = await readCapped(request, FORM_BODY_MAX);
  } catch (err) {
    if (err instanceof DomainError && err.code === "payload_too_large") {
      throw new DomainError(
        "payload_too_large",
        `This form is larger than the limit of ${FORM_BODY_MAX / (1024 * 1024)} MiB, so nothing was changed.`,
      );
    }
    throw unreadable();
  }
  try {
    const headers = { "content-type": request.headers.get("content-type")! };
    return await new Response(bytes, { headers }).formData();
  } catch {
    throw unreadable();
  }
}

function unreadable(): DomainError {
  return new DomainError("validation_error", "The form could not be read; reload the page and try again.");
}

export function consoleKit<C extends ConsoleKitDeps>(ctx: C): ConsoleKit<C> {
  const origin = new URL(ctx.publicUrl).origin;
  const secure = origin.startsWith("https:");

  // The one helper for a request's address (src/http/request-meta.ts): the socket's peer, or
  // X-Forwarded-For's client when the peer is one of [server] trusted_proxies.
  const clientOf = (c: RouteContext): ClientInfo => ({
    ip: clientAddress(c.request, ctx.live.trustedProxies),
    userAgent: c.request.headers.get("user-agent")?.slice(0, 500) ?? null,
  });

  const paramsOf = (c: RouteContext): Record<string, string> => {
    const p = c.params;
    return p && typeof p === "object" ? (p as Record<string, string>) : {};
  };

  const kit: ConsoleKit<C> = {
    ctx,
    get people() {
      return ctx.people;
    },
    origin,
    secure,

    async session(request, client) {
      const token = sessionToken(request);
      if (!token) return null;
      return await ctx.people.sessions.resolveSession(token, client);
    },

    async layoutFor(session, page) {
      await lowPriorityTurn(); // the body is rendered: the frame is the page's last step
      const accounts = await ctx.people.members.accountsOf(session.personId);
      return layout({ ...page, session, accounts });
    },

    async errorPage(err, request, session) {
      let status = 500;
      let message = "An unexpected error occurred; it has been logged.";
      let headers: Record<string, string> = {};
      if (err instanceof DomainError) {
        status = httpStatus(err.code);
        message = err.message;
        headers = errorHeaders(err);
      } else {
        log("error", "console: unhandled error", {
          method: request.method,
          path: new URL(request.url).pathname,
          ...errorFields(err),
        });
      }
      const body = errorBody(status, message);
      const title = status === 404 ? "Not found" : `Error ${status}`;
      let pageHtml: SafeHtml;
      try {
        pageHtml = session
          ? await kit.layoutFor(session, { title, body })
          : layout({ title, body, session: null, narrow: true });
      } catch {
        pageHtml = layout({ title, body, session: null, narrow: true });
      }
      return htmlResponse(pageHtml, status, headers);
    },

    page: (handler) =>
      wrap(true, false, (base, session) =>
        handler({ ...base, session: session!, layout: async (p) => await kit.layoutFor(session!, p) }),
      ),
    action: (handler) =>
      wrap(true, true, (base, session, form) =>
        handler({
          ...base,
          session: session!,
          form: form!,
          layout: async (p) => await kit.layoutFor(session!, p),
        }),
      ),
    publicPage: (handler) => wrap(false, false, (base) => handler(base)),
    publicAction: (handler) => wrap(false, true, (base, _s, form) => handler({ ...base, form: form! })),
  };

  /**
   * The one wrapper: console enabled (a reload may have turned it off), Origin on state changes,
   * session, form, CSRF, then the handler; whatever it throws becomes an HTML error page, and every
   * response gets the security headers.
   */
  function wrap(
    signedIn: boolean,
    changes: boolean,
    run: (
      base: PublicPageContext,
      session: ConsoleSession | null,
      form: Form | null,
    ) => Result | Promise<Result>,
  ): (c: RouteContext) => Promise<Response> {
    return async (c) => {
      const { request } = c;
      if (!ctx.live.console.enabled) {
        // Turned off by a reload: answer as if the console were not mounted (the API's 404).
        return errorResponse(
          new DomainError("not_found", `No route ${request.method} ${new URL(request.url).pathname}.`),
        );
      }
      let session: ConsoleSession | null = null;
      try {
        const state = changes || !isSafeMethod(request.method);
        if (state && !sameOrigin(request, origin)) {
          throw new DomainError(
            "forbidden",
            "This form was not sent from this site's own pages, so nothing was changed. Reload the page and try again.",
          );
        }
        const client = clientOf(c);
        // Every console request steps aside for the API's before each heavy step: its session
        // here, its reads and rendering, its frame (layoutFor). src/lib/low-priority.ts
        await lowPriorityTurn();
        session = await kit.session(request, client);
        const url = new URL(request.url);
        if (signedIn && !session) {
          const next = isSafeMethod(request.method) ? safeNext(url.pathname + url.search) : null;
          const to =
            next && next !== "/console"
              ? `/console/login?next=${encodeURIComponent(next)}`
              : "/console/login";
          return withSecurityHeaders(redirect(to, isHtmx(request) ? { "hx-redirect": to } : {}));
        }
        let form: Form | null = null;
        if (state) {
          form = await readForm(request, c.body);
          if (signedIn && session) {
            const submitted = request.headers.get("x-csrf-token") ?? field(form, "csrf");
            if (!csrfMatches(submitted, session.csrfToken)) {
              throw new DomainError(
                "forbidden",
                "This form has expired or did not come from your session, so nothing was changed. Reload the page and try again.",
              );
            }
          }
        }
        const base: PublicPageContext = { request, url, params: paramsOf(c), client, session };
        await lowPriorityTurn();
        const result = await run(base, session, form);
        return withSecurityHeaders(
          result instanceof Response ? result : htmlResponse(result),
          ctx.payments.checkoutOrigins(),
        );
      } catch (err) {
        return withSecurityHeaders(await kit.errorPage(err, request, session));
      }
    };
  }

  return kit;
}

/** A small helper for forms: a paragraph with an error message (role=alert), or nothing. */
export function formError(message: string | null | undefined): SafeHtml {
  return html`${message ? html`<p class="notice error" role="alert">${message}</p>` : null}`;
}
