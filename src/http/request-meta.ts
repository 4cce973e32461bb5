import { type Cidr, resolveClientAddress } from "../lib/addresses.ts";
import { type PeerSource, requestMeta } from "../lib/request-meta.ts";

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

export { beginRequest, type PeerSource, type RequestMeta, requestMeta } from "../lib/request-meta.ts";
