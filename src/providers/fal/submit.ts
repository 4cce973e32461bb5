import { ProviderError } from "../types.ts";
import { fetchUpstream, NOT_SENT, upstreamDetail } from "../upstream-client.ts";

export interface SubmitCall {
  url: string;
  body: Record<string, unknown>;
  headers: Record<string, string>;
  timeoutMs: number;
  signal: AbortSignal;
  secret: string | null;
}

/**
 * POSTs the job to fal's queue. This is the one upstream call that does not go through
 * `upstreamJson`, because a submit must tell apart "nothing was created" from "we do not know":
 *
 * - connection refused / DNS failure: the request never left, so it is "capacity" (retry later);
 * - 429 and 503: fal refused it cleanly and created nothing, so it is "capacity" too;
 * - it goes on a connection of its own (`fetchUpstream`), never on a pooled one fal may close as idle
 *   as it is written, so the keep-alive race cannot drop it;
 * - the connection dropped after sending, a timeout, a 502/504 from a proxy, or a 2xx we cannot read:
 *   fal may well have queued the job (and will bill for it) while we never learnt its request_id.
 *   Retrying would run and bill it twice and we could not resume the first one, so these are
 *   "failed" (the gateway releases the user's hold) and never resubmitted blindly;
 * - 401/403: the gateway's own key is wrong, "failed" (not the user's input);
 * - other 4xx: fal refused the input, "input"; other 5xx: "failed".
 * The refusals that certainly created nothing (never sent; 429, 503 and other 5xx answered by fal
 * itself, not 502/504 from a proxy) are `notAccepted`: a model with several routes tries the next.
 * Our messages never repeat fal's status or words: those are the error's `status` and `detail`.
 */
export async function submitToFal(call: SubmitCall): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetchUpstream(call.url, {
      method: "POST",
      headers: { ...call.headers, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(call.body),
      redirect: "error",
      signal: AbortSignal.any([call.signal, AbortSignal.timeout(call.timeoutMs)]),
    });
  } catch (err) {
    if (call.signal.aborted) throw err;
    const e = err as { name?: string; code?: string };
    if (e.code && NOT_SENT.has(e.code)) {
      throw new ProviderError("capacity", "fal could not be reached; nothing was submitted.", {
        notAccepted: true,
      });
    }
    const why = e.name === "TimeoutError" ? "timed out" : "lost the connection";
    throw new ProviderError(
      "failed",
      `The submit to fal ${why} before an answer; fal may have queued the job, so it is not sent again.`,
    );
  }
  const text = await res.text().catch(() => null);
  if (res.status === 429 || res.status === 503) {
    const retry = Number(res.headers.get("retry-after"));
    throw new ProviderError("capacity", "fal is busy; nothing was submitted.", {
      ...(Number.isFinite(retry) && retry > 0 ? { retryAfterMs: Math.min(retry, 3600) * 1000 } : {}),
      status: res.status,
      notAccepted: true,
    });
  }
  // What fal said goes to the error's detail (the operator's log), never into its message.
  const said = { status: res.status, detail: text === null ? null : falDetail(text), secret: call.secret };
  if (res.status === 502 || res.status === 504) {
    throw new ProviderError(
      "failed",
      "The submit to fal got a gateway error; fal may have queued the job, so it is not sent again.",
      said,
    );
  }
  if (res.status === 401 || res.status === 403) {
    throw new ProviderError("failed", "fal refused the gateway's API key.", said);
  }
  if (res.status >= 500)
    throw new ProviderError("failed", "fal failed to accept the job.", { ...said, notAccepted: true });
  if (res.status >= 400) throw new ProviderError("input", "fal refused the job's input.", said);
  if (text === null) {
    throw new ProviderError("failed", "The submit reply from fal was cut off; the job is not sent again.");
  }
  try {
    const body = JSON.parse(text) as unknown;
    if (typeof body === "object" && body !== null && !Array.isArray(body))
      return body as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new ProviderError("failed", "fal sent a malformed submit reply (not a JSON object).", said);
}

/**
 * fal's error text for the log: `{detail: "..."}`, FastAPI's `{detail: [{loc, msg}]}` (validation
 * errors), or the shapes `upstreamDetail` knows.
 */
export function falDetail(text: string): string {
  try {
    const b = JSON.parse(text) as { detail?: unknown };
    if (Array.isArray(b.detail)) {
      const parts = b.detail
        .map((d) => {
          if (typeof d !== "object" || d === null) return null;
          const { msg, loc } = d as { msg?: unknown; loc?: unknown };
          if (typeof msg !== "string") return null;
          const where = Array.isArray(loc) ? loc.filter((x) => x !== "body").join(".") : "";
          return where ? `${where}: ${msg}` : msg;
        })
        .filter((x): x is string => x !== null);
      if (parts.length > 0) return parts.join("; ");
    }
  } catch {
    return text;
  }
  return upstreamDetail(text);
}
