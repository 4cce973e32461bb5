import { randomBase62 } from "../lib/ids.ts";

/** Per-request facts the access log needs, filled in as the request moves through the app. */
export interface RequestMeta {
  id: string;
  start: number;
  route: string | null;
  keyPrefix: string | null;
  /** Headers every response to this request carries (e.g. RateLimit on writes). */
  extraHeaders: Record<string, string> | null;
}

const metas = new WeakMap<Request, RequestMeta>();

export function beginRequest(request: Request): RequestMeta {
  const meta: RequestMeta = {
    id: `req_${randomBase62(20)}`,
    start: performance.now(),
    route: null,
    keyPrefix: null,
    extraHeaders: null,
  };
  metas.set(request, meta);
  return meta;
}

export function requestMeta(request: Request): RequestMeta | undefined {
  return metas.get(request);
}
