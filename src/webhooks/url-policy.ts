import { lookup } from "node:dns/promises";
import {
  type Cidr,
  cidrContains,
  classifyIp,
  formatIp,
  type Ip,
  parseCidr,
  parseIp,
} from "../lib/addresses.ts";
import { DomainError } from "../lib/errors.ts";

/** What the operator allows besides public addresses (config `webhooks.allow_private_cidrs`). */
export interface WebhookPolicy {
  allowPrivateCidrs: string[];
}

/** Host name -> every address it resolves to. Injectable so tests never touch real DNS. */
export type Resolver = (hostname: string) => Promise<string[]>;

/** getaddrinfo through node:dns, all families, in the resolver's own order. */
export const systemResolver: Resolver = async (hostname) => {
  const found = await lookup(hostname, { all: true, verbatim: true });
  return found.map((a) => a.address);
};

export const MAX_WEBHOOK_URL_LENGTH = 2048;
/** A resolver that hangs must not hold a submit (or a delivery slot) for long. */
const RESOLVE_TIMEOUT_MS = 5000;

const bad = (message: string) => new DomainError("bad_webhook_url", message, { param: "webhook_url" });

/**
 * The syntactic rules: an absolute http(s) URL, at most 2048 characters, with a host and without
 * credentials (they would end up in logs and in the request record) or whitespace/control
 * characters (the URL parser silently strips some, so what is stored would differ from what
 * the client sent).
 */
export function parseWebhookUrl(raw: unknown): URL {
  if (typeof raw !== "string" || raw.length === 0) throw bad("webhook_url must be a non-empty string.");
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) {
    throw bad(`webhook_url is longer than ${MAX_WEBHOOK_URL_LENGTH} characters.`);
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u0020\u007f]/.test(raw)) {
    throw bad("webhook_url must not contain spaces or control characters.");
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad("webhook_url is not a valid absolute URL.");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw bad(`webhook_url must use http or https (got "${url.protocol.slice(0, -1)}").`);
  }
  if (url.username !== "" || url.password !== "") {
    throw bad("webhook_url must not contain a user name or password.");
  }
  if (url.hostname === "") throw bad("webhook_url has no host.");
  // Percent-encoding and IDNA can lengthen it; what is stored and sent must also fit.
  if (url.href.length > MAX_WEBHOOK_URL_LENGTH) {
    throw bad(`webhook_url is longer than ${MAX_WEBHOOK_URL_LENGTH} characters once encoded.`);
  }
  return url;
}

/** Allow-list entries; config load has validated them, so an invalid one can only fail closed. */
function compileCidrs(policy: WebhookPolicy): Cidr[] {
  const out: Cidr[] = [];
  for (const text of policy.allowPrivateCidrs) {
    try {
      out.push(parseCidr(text));
    } catch {
      // Skipped: matching nothing is the safe side.
    }
  }
  return out;
}

async function resolveWithTimeout(hostname: string, resolve: Resolver): Promise<string[]> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("DNS resolution timed out")), RESOLVE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([resolve(hostname), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves the URL's host and checks EVERY address: one private answer among public ones is
 * refused, because the connecting side may pick any of them (and DNS rebinding relies on exactly
 * that). An IP literal is used as is. Returns the checked addresses, in resolver order; the
 * caller connects to one of these and nothing else.
 *
 * Messages for host names do not say which kind of private address was found, so the error
 * cannot be used to map the operator's internal DNS.
 */
export async function resolveAllowedAddresses(
  url: URL,
  policy: WebhookPolicy,
  resolve: Resolver = systemResolver,
): Promise<Ip[]> {
  const cidrs = compileCidrs(policy);
  const allowed = (ip: Ip) => {
    const v = classifyIp(ip);
    return v.public || (v.allowable && cidrs.some((c) => cidrContains(c, v.ip)));
  };

  const literal = parseIp(url.hostname);
  if (literal) {
    if (!allowed(literal)) {
      const v = classifyIp(literal);
      throw bad(`webhook_url points to ${formatIp(v.ip)}, ${v.label}; only public addresses are accepted.`);
    }
    return [literal];
  }

  let answers: string[];
  try {
    answers = await resolveWithTimeout(url.hostname, resolve);
  } catch {
    throw bad(`webhook_url's host "${url.hostname}" could not be resolved.`);
  }
  const ips: Ip[] = [];
  for (const a of answers) {
    const ip = parseIp(a);
    // An answer that is not an address cannot be checked, so it cannot be trusted.
    if (!ip || !allowed(ip)) {
      throw bad(
        `webhook_url's host "${url.hostname}" resolves to a non-public address (private, loopback, link-local or reserved); every address of the host must be public.`,
      );
    }
    ips.push(ip);
  }
  if (ips.length === 0) throw bad(`webhook_url's host "${url.hostname}" could not be resolved.`);
  return ips;
}

/**
 * Submit-time check of a client's webhook_url. Throws 400 `bad_webhook_url` (param
 * `webhook_url`) with one clear sentence; returns the parsed URL (store `url.href`).
 */
export async function checkWebhookUrl(
  raw: string,
  policy: WebhookPolicy,
  resolve: Resolver = systemResolver,
): Promise<URL> {
  const url = parseWebhookUrl(raw);
  await resolveAllowedAddresses(url, policy, resolve);
  return url;
}
