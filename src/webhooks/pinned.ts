import type { LookupAddress } from "node:dns";
import {
  type ClientRequest,
  request as httpRequest,
  type IncomingMessage,
  type RequestOptions,
} from "node:http";
import { request as httpsRequest } from "node:https";
import { formatIp, type Ip, normalizeIp, parseIp } from "../lib/addresses.ts";
import { concatBytes } from "../lib/bytes.ts";
import { type Resolver, resolveAllowedAddresses, systemResolver, type WebhookPolicy } from "./url-policy.ts";

/**
 * Outbound HTTP to a URL someone else chose (a client's webhook, a client's image URL), connected
 * only to an address the outbound policy checked just now (url-policy.ts).
 *
 * Why node:http and not fetch: Bun's fetch ignores a custom DNS lookup, so the address it connects
 * to could differ from the one checked (DNS rebinding: public at check time, 127.0.0.1 at connect
 * time). Here the socket's `lookup` hands back the checked address, so there is no second DNS
 * query; the Host header and the TLS server name stay the URL's host, so virtual hosts and
 * certificate checks work as usual. No agent (a pooled keep-alive socket could lead to an address
 * checked for another request), and redirects are never followed (node:http does not follow them;
 * a 3xx is just a non-2xx answer).
 */

/**
 * IPv4 first: a host with both A and AAAA records is reachable over IPv4 from far more servers,
 * and there is no second try within an attempt.
 */
export function pickAddress(ips: Ip[]): Ip {
  const normal = ips.map(normalizeIp);
  return normal.find((ip) => ip.family === 4) ?? normal[0]!;
}

/** node:http(s) options that connect to `ip` and nothing else, for `url`. */
export function pinnedRequestOptions(
  url: URL,
  ip: Ip,
  method: string,
  headers: Record<string, string>,
  ca?: string | Buffer,
): RequestOptions & { servername?: string; ca?: string | Buffer } {
  const address = formatIp(ip);
  const lookup = (
    _hostname: string,
    opts: { all?: boolean } | undefined,
    cb: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    if (opts?.all) cb(null, [{ address, family: ip.family }]);
    else cb(null, address, ip.family);
  };
  const isHttps = url.protocol === "https:";
  const bare = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const options: RequestOptions & { servername?: string; ca?: string | Buffer } = {
    method,
    hostname: bare,
    port: url.port === "" ? (isHttps ? 443 : 80) : Number(url.port),
    path: `${url.pathname}${url.search}`,
    headers: { ...headers, host: url.host, connection: "close" },
    agent: false,
    lookup: lookup as RequestOptions["lookup"],
  };
  if (isHttps) {
    // SNI carries names only; for an IP-literal URL the certificate is checked against the IP.
    if (!parseIp(url.hostname)) options.servername = bare;
    if (ca) options.ca = ca;
  }
  return options;
}

/** Why a pinned GET gave nothing: the policy refused the address, it answered no 200, or the rest. */
export class PinnedGetError extends Error {
  override name = "PinnedGetError";
  constructor(
    message: string,
    readonly kind: "refused" | "status" | "too-large" | "timeout" | "network",
  ) {
    super(message);
  }
}

export interface PinnedGetOptions {
  policy: WebhookPolicy;
  resolve?: Resolver;
  /** The whole request: DNS, connect, TLS, headers and body. */
  timeoutMs: number;
  maxBytes: number;
  signal: AbortSignal;
  ca?: string | Buffer;
}

/**
 * GETs `url` into memory (at most `maxBytes`), connecting only to an address the policy allows.
 * Anything but a 200 is a PinnedGetError; its messages are for the server's log, never for a client
 * (they may name a status the target answered).
 */
export async function getPinned(
  url: URL,
  o: PinnedGetOptions,
): Promise<{ bytes: Uint8Array; contentType: string | null }> {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new PinnedGetError(`${url.protocol} is not http or https`, "refused");
  }
  if (url.username !== "" || url.password !== "")
    throw new PinnedGetError("credentials in the URL", "refused");
  let ips: Ip[];
  try {
    ips = await resolveAllowedAddresses(url, o.policy, o.resolve ?? systemResolver);
  } catch (err) {
    throw new PinnedGetError(`refused: ${(err as Error).message}`, "refused");
  }
  o.signal.throwIfAborted();
  const options = pinnedRequestOptions(url, pickAddress(ips), "GET", { "user-agent": "gengate/1" }, o.ca);
  return await new Promise((resolve, reject) => {
    let req: ClientRequest | null = null;
    let res: IncomingMessage | null = null;
    let settled = false;
    const settle = (
      outcome: { ok: { bytes: Uint8Array; contentType: string | null } } | { err: unknown },
    ) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      o.signal.removeEventListener("abort", onAbort);
      res?.destroy();
      req?.destroy();
      if ("ok" in outcome) resolve(outcome.ok);
      else reject(outcome.err);
    };
    const onAbort = () => settle({ err: o.signal.reason });
    o.signal.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(
      () => settle({ err: new PinnedGetError(`no complete answer within ${o.timeoutMs} ms`, "timeout") }),
      o.timeoutMs,
    );
    try {
      req = (url.protocol === "https:" ? httpsRequest : httpRequest)(options, (answer) => {
        res = answer;
        if (answer.statusCode !== 200) {
          settle({ err: new PinnedGetError(`answered ${answer.statusCode}`, "status") });
          return;
        }
        const declared = Number(answer.headers["content-length"]);
        if (Number.isFinite(declared) && declared > o.maxBytes) {
          settle({ err: new PinnedGetError(`declares ${declared} bytes`, "too-large") });
          return;
        }
        const parts: Uint8Array[] = [];
        let size = 0;
        answer.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > o.maxBytes)
            settle({ err: new PinnedGetError(`more than ${o.maxBytes} bytes`, "too-large") });
          else parts.push(new Uint8Array(chunk));
        });
        answer.on("end", () => {
          const type = answer.headers["content-type"];
          settle({ ok: { bytes: concatBytes(parts), contentType: typeof type === "string" ? type : null } });
        });
        answer.on("error", (err) => settle({ err: new PinnedGetError(`body: ${err.message}`, "network") }));
        answer.on("close", () => {
          if (!answer.complete) settle({ err: new PinnedGetError("body cut off", "network") });
        });
      });
    } catch (err) {
      settle({ err: new PinnedGetError(`request failed: ${(err as Error).message}`, "network") });
      return;
    }
    req.on("error", (err) =>
      settle({ err: new PinnedGetError(`connection failed: ${err.message}`, "network") }),
    );
    req.end();
  });
}
