import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the secret is "whsec_" + base64
 * of the key bytes; the signature is "v1," + base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}")).
 * Kept byte-compatible with the official `standardwebhooks` libraries so clients can use them.
 */

export const SECRET_PREFIX = "whsec_";
/** 32 bytes = 256-bit key (the standard asks for 24 to 64). */
const SECRET_BYTES = 32;
export const DEFAULT_TOLERANCE_SECONDS = 300;

export class WebhookVerificationError extends Error {
  override name = "WebhookVerificationError";
}

export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString("base64");
}

/** The HMAC key: the base64 part after "whsec_", decoded (a bare base64 secret is accepted too). */
export function secretKey(secret: string): Buffer {
  const b64 = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new Error("webhook secret is not whsec_ + base64");
  const key = Buffer.from(b64, "base64");
  if (key.length === 0) throw new Error("webhook secret is empty");
  return key;
}

function digest(key: Buffer, id: string, timestampSeconds: number, body: string): Buffer {
  return createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`, "utf8").digest();
}

/** "v1,<base64>" for one secret. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${digest(secretKey(secret), id, timestampSeconds, body).toString("base64")}`;
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | null {
  if (headers instanceof Headers) return headers.get(name);
  const v = headers[name] ?? headers[name.toLowerCase()];
  if (Array.isArray(v)) return v[0] ?? null;
  return v ?? null;
}

/**
 * Verifies a received webhook; throws WebhookVerificationError saying why it is refused.
 * The signature header may hold several space-separated signatures (during a secret rotation
 * the sender signs with both secrets); one valid v1 signature is enough. Digests are compared
 * with timingSafeEqual after a length check, so the comparison leaks nothing about the expected
 * value. The timestamp must be within `toleranceSeconds` of now, which bounds replays.
 */
export function verifyWebhook(
  secret: string,
  headers: HeaderSource,
  body: string,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
  nowSeconds = Math.floor(Date.now() / 1000),
): void {
  const id = header(headers, "webhook-id");
  const ts = header(headers, "webhook-timestamp");
  const sig = header(headers, "webhook-signature");
  if (!id || !ts || !sig) throw new WebhookVerificationError("missing webhook-id, -timestamp or -signature");
  if (!/^[0-9]{1,12}$/.test(ts)) throw new WebhookVerificationError("webhook-timestamp is not unix seconds");
  const timestamp = Number(ts);
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) {
    throw new WebhookVerificationError("webhook-timestamp is outside the tolerance");
  }
  const expected = digest(secretKey(secret), id, timestamp, body);
  for (const part of sig.split(" ")) {
    const comma = part.indexOf(",");
    if (comma < 0 || part.slice(0, comma) !== "v1") continue;
    const given = Buffer.from(part.slice(comma + 1), "base64");
    if (given.length === expected.length && timingSafeEqual(given, expected)) return;
  }
  throw new WebhookVerificationError("no matching signature");
}
