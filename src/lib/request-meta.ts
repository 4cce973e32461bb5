/**
 * Per-request facts (the request id, the route, the key prefix, extra headers), kept beside the
 * Request object from the app's onRequest hook on. Here in lib/ so a service that was handed a
 * request (a download's Range, a log line's id) can read them without importing the HTTP kit;
 * src/http/request-meta.ts re-exports them with the client address.
 */
import { randomBase62 } from "./ids.ts";

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
