import type { AccountStore, Principal } from "../accounts/store.ts";
import type { LiveSettings } from "../config/schema.ts";
import { rateLimitHeaders } from "../http/errors.ts";
import { clientAddress, requestMeta } from "../http/request-meta.ts";
import { cidrContains, parseIp } from "../lib/addresses.ts";
import { digestsEqual, hashSecret } from "../lib/api-keys.ts";
import { DomainError } from "../lib/errors.ts";
import { nowSeconds, rfc3339 } from "../lib/time.ts";
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

/**
 * Accepts `Key <key>` (the spec's form, fal's clients), `Bearer <key>` (OpenAI's and Anthropic's
 * SDKs with an auth token) and `Token <key>` (Replicate's clients: replicate-javascript sends
 * `Authorization: Bearer`, the older Python client and curl examples `Token`).
 */
export function credentialFrom(header: string | null): string | null {
  if (!header) return null;
  const m = /^(Key|Bearer|Token)[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m ? m[2]! : null;
}

const UNAUTHORIZED_MESSAGE =
  "Missing, malformed, unknown or revoked API key. Send `Authorization: Key <API_KEY>` (or `Bearer <API_KEY>`, `Token <API_KEY>`, `x-api-key: <API_KEY>`).";

/**
 * The API key a request carries: `Authorization` (any scheme above) or `x-api-key` (the Anthropic
 * SDK's header, @anthropic-ai/sdk/src/client.ts `apiKeyAuth`). Both may be sent (the
 * Anthropic SDK sends only one, but a proxy may add the other); two DIFFERENT keys are 401, so a
 * request is never billed to a key its sender did not mean. Null when neither header is there.
 */
export function requestCredential(headers: Headers): string | null {
  const authorization = headers.get("authorization");
  const fromAuthorization = credentialFrom(authorization);
  const apiKey = headers.get("x-api-key")?.trim() || null;
  if (authorization !== null && fromAuthorization === null)
    throw new DomainError("unauthorized", UNAUTHORIZED_MESSAGE);
  if (fromAuthorization !== null && apiKey !== null && fromAuthorization !== apiKey)
    throw new DomainError(
      "unauthorized",
      "Two different API keys were sent (Authorization and x-api-key); send one.",
    );
  return fromAuthorization ?? apiKey;
}

/** Whether a request carries any credential header (an anonymous read has neither). */
export function hasCredential(headers: Headers): boolean {
  return headers.has("authorization") || headers.has("x-api-key");
}

/** What authenticating a key reads; `live` is read at each call (a reload swaps it). */
export interface KeyAuthDeps {
  accounts: AccountStore;
  rateLimiter: WriteRateLimit;
  live: Pick<LiveSettings, "limits" | "trustedProxies">;
}

/** Resolves the caller of an API route or throws 401 `unauthorized`. */
export async function requirePrincipal(ctx: KeyAuthDeps, request: Request): Promise<Principal> {
  const credential = requestCredential(request.headers);
  const principal = credential ? await ctx.accounts.authenticate(credential) : null;
  if (!principal) throw new DomainError("unauthorized", UNAUTHORIZED_MESSAGE);
  checkKeyControls(principal, () => clientAddress(request, ctx.live.trustedProxies));
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

/**
 * The key's own controls, once per request before anything else runs: its account disabled by an
 * operator, the key disabled or past its
 * expiry is 401 (the message says which, so its owner knows what to change), a client address
 * outside `allowed_cidrs` 403 address_not_allowed. An unknown address (no socket peer) is outside
 * every list: a key limited to addresses is never used from an address nobody could check.
 */
function checkKeyControls(p: Principal, address: () => string | null): void {
  // The operator's switch first: enabling the key would not help its owner.
  if (p.accountDisabled)
    throw new DomainError(
      "unauthorized",
      "This API key's account is disabled by the operator; contact the operator of this server.",
    );
  if (p.disabled)
    throw new DomainError("unauthorized", "This API key is disabled; enable it on the console's Keys page.");
  if (p.expiresAt !== null && BigInt(nowSeconds()) >= p.expiresAt)
    throw new DomainError(
      "unauthorized",
      `This API key expired at ${rfc3339(p.expiresAt)}; use another key.`,
    );
  if (p.allowedCidrs === null) return;
  const text = address();
  const ip = text === null ? null : parseIp(text);
  if (!ip || !p.allowedCidrs.some((c) => cidrContains(c, ip)))
    throw new DomainError(
      "address_not_allowed",
      `This API key may not be used from ${text ?? "an unknown address"}: it is outside the key's allowed_cidrs.`,
    );
}

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Like requirePrincipal, but a request without credentials is anonymous rather than an error. */
export async function optionalPrincipal(ctx: KeyAuthDeps, request: Request): Promise<Principal | null> {
  return hasCredential(request.headers) ? await requirePrincipal(ctx, request) : null;
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
