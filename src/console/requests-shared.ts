/**
 * What the requests route groups share (requests-pages.ts, requests-live-pages.ts): the list's
 * filters read from the URL, the page a cancel returns to, and the notice that page then shows.
 */
import { UUID_PATTERN } from "../lib/ids.ts";
import { JOB_STATUSES, type RequestFilters } from "../queue/request-filters.ts";
import type { CancelNotice, Filters } from "./requests-list-view.ts";
import { safeNext } from "./security.ts";

export function filtersOf(url: URL): Filters {
  const get = (n: string) => (url.searchParams.get(n) ?? "").trim().slice(0, 300);
  return {
    key: get("key"),
    model: get("model"),
    status: get("status"),
    source: get("source"),
    from: get("from"),
    to: get("to"),
    id: get("id"),
  };
}

/** The typed filters as the requests service reads them (empty: no filter); the id filter is not one. */
export function requestFiltersOf(f: Filters): Omit<RequestFilters, "limit" | "cursor"> {
  return {
    keyId: f.key || null,
    modelId: f.model || null,
    status: f.status || null,
    source: f.source || null,
    from: f.from || null,
    to: f.to || null,
  };
}

/** The requests list (with its query) or one request's page; anything else is the plain list. */
export function backOf(value: string): string {
  const next = safeNext(value);
  if (!next) return "/console/requests";
  const url = new URL(next, "http://gengate.invalid");
  if (url.pathname === "/console/requests") {
    for (const k of ["notice", "request", "now"]) url.searchParams.delete(k);
    return url.pathname + url.search;
  }
  const m = /^\/console\/requests\/([0-9a-f-]{36})$/.exec(url.pathname);
  return m && UUID_PATTERN.test(m[1]!) ? url.pathname : "/console/requests";
}

/** `back` with the notice of a cancel (303 target). */
export function withNotice(back: string, n: CancelNotice): string {
  const url = new URL(back, "http://gengate.invalid");
  url.searchParams.set("notice", n.kind);
  url.searchParams.set("request", n.id);
  if (n.status) url.searchParams.set("now", n.status);
  return url.pathname + url.search;
}

/** The notice in a page's URL, from the fixed list, with a checked id and status; else null. */
export function noticeOf(url: URL): CancelNotice | null {
  const kind = url.searchParams.get("notice");
  const id = url.searchParams.get("request") ?? "";
  const now = url.searchParams.get("now");
  if ((kind !== "cancelled" && kind !== "not-cancellable") || !UUID_PATTERN.test(id)) return null;
  const status = now && (JOB_STATUSES as readonly string[]).includes(now) ? now : null;
  return { kind, id, status };
}
