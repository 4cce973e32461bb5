/**
 * The console's request guards, as pure functions over the request (no state): security headers,
 * the Origin check of state-changing requests, the CSRF token comparison, the `next` redirect
 * filter, and the session cookie. docs/console.md, "Pages and security", explains each.
 */
import { timingSafeEqual } from "node:crypto";
import { SESSION_COOKIE } from "../people/types.ts";

/** The one Content-Security-Policy of every console response (docs/console.md "Security"). */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
  "media-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'";

/** Headers on every console response (pages, errors, redirects, assets). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONSOLE_CSP,
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "x-content-type-options": "nosniff",
};

/**
 * Sets the security headers on a response (and `Cache-Control: no-store` unless it has one).
 * `formTargets`: origins forms may also lead to: the enabled payment providers' checkout pages,
 * since a browser checks the billing form's 303 to the provider against `form-action`.
 */
export function withSecurityHeaders(res: Response, formTargets: readonly string[] = []): Response {
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.headers.set(k, v);
  if (formTargets.length)
    res.headers.set(
      "content-security-policy",
      CONSOLE_CSP.replace("form-action 'self'", `form-action 'self' ${formTargets.join(" ")}`),
    );
  if (!res.headers.has("cache-control")) res.headers.set("cache-control", "no-store");
  return res;
}

/** Methods that change nothing; every other method must pass the Origin and CSRF checks. */
export function isSafeMethod(method: string): boolean {
  return method === "GET" || method === "HEAD" || method === "OPTIONS";
}

/**
 * Whether a state-changing request comes from our own pages: its Origin must equal the public URL's
 * origin; without Origin (some older browsers on same-origin POSTs), the Referer's origin must; with
 * neither, it is refused.
 */
export function sameOrigin(request: Request, publicOrigin: string): boolean {
  const origin = request.headers.get("origin");
  if (origin !== null) return origin === publicOrigin;
  const referer = request.headers.get("referer");
  if (referer === null) return false;
  try {
    return new URL(referer).origin === publicOrigin;
  } catch {
    return false;
  }
}

/** Constant-time comparison of a submitted CSRF token with the session's. */
export function csrfMatches(submitted: string | null | undefined, expected: string): boolean {
  if (typeof submitted !== "string" || submitted.length === 0 || expected.length === 0) return false;
  const a = Buffer.from(submitted);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * A `next` target we may redirect to after sign-in: a console path on this origin, nothing else
 * (no scheme, no `//host`, no backslashes or control characters). Anything else gives null.
 */
export function safeNext(next: string | null | undefined): string | null {
  if (!next || next.length > 2000) return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\\\u0000-\u001f\u007f]/.test(next)) return null;
  const isConsole = (p: string) => p === "/console" || p.startsWith("/console/") || p.startsWith("/console?");
  if (!isConsole(next)) return null;
  try {
    const base = "http://gengate.invalid";
    const url = new URL(next, base);
    // Checked again after normalising: "/console/../x" is "/x".
    if (url.origin !== base || !isConsole(url.pathname)) return null;
    return url.pathname + url.search;
  } catch {
    return null;
  }
}

/** The session token from the Cookie header, or null. */
export function sessionToken(request: Request): string | null {
  const header = request.headers.get("cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_\-.~]{16,200}$/.test(value) ? value : null;
    }
  }
  return null;
}

/**
 * Set-Cookie for a new session: HttpOnly, SameSite=Lax, Path=/console, Secure on https, and a
 * Max-Age that ends at the session's absolute expiry.
 */
export function sessionCookie(token: string, expiresAt: number, nowSeconds: number, secure: boolean): string {
  const maxAge = Math.max(0, Math.floor(expiresAt - nowSeconds));
  return `${SESSION_COOKIE}=${token}; Path=/console; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`;
}

/** Set-Cookie that removes the session cookie. */
export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/console; Max-Age=0; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`;
}
