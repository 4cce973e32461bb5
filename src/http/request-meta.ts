import { type Cidr, resolveClientAddress } from "../lib/addresses.ts";
import { randomBase62 } from "../lib/ids.ts";

/** Where a request's socket address comes from: Bun's server (`Server.requestIP`), or a test's. */
export interface PeerSource {
  requestIP(request: Request): { address: string } | null;
}

/** Per-request facts the access log needs, filled in as the request moves through the app. */
export interface RequestMeta {
  id: string;
  start: number;
  route: string | null;
  keyPrefix: string | null;
  /** Headers every response to this request carries (e.g. RateLimit on writes). */
  extraHeaders: Record<string, string> | null;
  /** The server the request arrived on, asked for the peer only when an address is needed. */
  peers: PeerSource | null;
}

const metas = new WeakMap<Request, RequestMeta>();

export function beginRequest(request: Request, peers: PeerSource | null = null): RequestMeta {
  const meta: RequestMeta = {
    id: `req_${randomBase62(20)}`,
    start: performance.now(),
    route: null,
    keyPrefix: null,
    extraHeaders: null,
    peers,
  };
  metas.set(request, meta);
  return meta;
}

export function requestMeta(request: Request): RequestMeta | undefined {
  return metas.get(request);
}

/**
 * The client's address: the socket's peer, or the nearest untrusted X-Forwarded-For hop when the
 * peer is one of `trustedProxies` (`[server] trusted_proxies`; resolveClientAddress). Null when the
 * request did not come through a server (an in-process test without a PeerSource).
 */
export function clientAddress(request: Request, trustedProxies: readonly Cidr[]): string | null {
  let peer: string | null = null;
  try {
    peer = requestMeta(request)?.peers?.requestIP(request)?.address ?? null;
  } catch {
    // Bun throws for a request it did not receive itself.
  }
  return resolveClientAddress(peer, request.headers.get("x-forwarded-for"), trustedProxies);
}
