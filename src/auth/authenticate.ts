import type { AccountStore, Principal } from "../accounts/store.ts";
import type { LiveSettings } from "../config/schema.ts";
import { rateLimitHeaders } from "../http/errors.ts";
import { requestMeta } from "../http/request-meta.ts";
import { digestsEqual, hashSecret } from "../lib/api-keys.ts";
import { DomainError } from "../lib/errors.ts";
import type { WriteRateLimit } from "../limits/rate-limit.ts";

/** 403 for a key without the manage right; `what` names the action refused. */
export function requireManage(p: Principal, what = "manage keys"): void {
  if (!p.canManage) {
    throw new DomainError(
      "forbidden",
      `This key may not ${what}; use a key with the manage right (such as the Default key).`,
    );
  }
}

/** Accepts `Key <key>` (the spec's form) and `Bearer <key>` (so OpenAI SDKs work unchanged). */
export function credentialFrom(header: string | null): string | null {
  if (!header) return null;
  const m = /^(Key|Bearer)[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m ? m[2]! : null;
}

const UNAUTHORIZED_MESSAGE =
  "Missing, malformed, unknown or revoked API key. Send `Authorization: Key <API_KEY>` (or `Bearer <API_KEY>`).";

/** What authenticating a key reads; `live` is read at each call (a reload swaps it). */
export interface KeyAuthDeps {
  accounts: AccountStore;
  rateLimiter: WriteRateLimit;
  live: Pick<LiveSettings, "limits">;
}

/** Resolves the caller of an API route or throws 401 `unauthorized`. */
export async function requirePrincipal(ctx: KeyAuthDeps, request: Request): Promise<Principal> {
  const credential = credentialFrom(request.headers.get("authorization"));
  const principal = credential ? await ctx.accounts.authenticate(credential) : null;
  if (!principal) throw new DomainError("unauthorized", UNAUTHORIZED_MESSAGE);
  const meta = requestMeta(request);
  if (meta) meta.keyPrefix = principal.keyPrefix;
  if (WRITE_METHODS.has(request.method)) {
    // Writes count against the key's per-minute rate; reads and status polls never do.
    const window = await ctx.rateLimiter.hit(
      principal.keyId,
      principal.writesPerMinute ?? ctx.live.limits.writesPerMinute,
    );
    if (meta) meta.extraHeaders = { ...meta.extraHeaders, ...rateLimitHeaders(window) };
  }
  return principal;
}

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Like requirePrincipal, but a request without credentials is anonymous rather than an error. */
export async function optionalPrincipal(ctx: KeyAuthDeps, request: Request): Promise<Principal | null> {
  return request.headers.has("authorization") ? await requirePrincipal(ctx, request) : null;
}

/** Operator API: `Authorization: Bearer <admin token>`, compared as SHA-256 digests in constant time. */
export function requireAdmin(ctx: { adminTokenHash: Uint8Array }, request: Request): void {
  const credential = credentialFrom(request.headers.get("authorization"));
  if (!credential || !digestsEqual(hashSecret(credential), ctx.adminTokenHash)) {
    throw new DomainError(
      "unauthorized",
      "Missing or wrong admin token. Send `Authorization: Bearer <admin token>`.",
    );
  }
  const meta = requestMeta(request);
  if (meta) meta.keyPrefix = "admin";
}
