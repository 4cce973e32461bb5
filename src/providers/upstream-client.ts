import { log } from "../lib/log.ts";
import { ProviderError } from "./types.ts";

export interface UpstreamCall {
  timeoutMs: number;
  signal: AbortSignal;
  /** Redacted from every message: the upstream key must never reach logs, errors or records. */
  secret?: string | null;
  /**
   * Marks an answer that reports the outcome of the upstream's work rather than of this call (fal's
   * stored error result carries X-Fal-Error-Type): it is returned to the caller even when its status
   * (429/502/503/504) would otherwise be taken for busy and retried until the job's time limit.
   */
  isOutcome?: (res: Response) => boolean;
}

/**
 * How Bun's fetch reports a connection the server closed before any answer arrived ("ECONNRESET: The
 * socket connection was closed unexpectedly"; EPIPE when the close came while the body was written).
 */
const CLOSED_BEFORE_ANSWER = new Set(["ECONNRESET", "EPIPE", "ConnectionClosed"]);

/**
 * How soon after the send a close must come to be the keep-alive race. The race is immediate: the
 * server closes the socket as the request's first bytes arrive, one round trip after the send (well
 * under 1 ms on loopback, where 11-13 of ~31,000 chat calls at 32 connections failed this way, all
 * within one millisecond, when the upstream's idle timer fired). 1 s leaves room for a busy event
 * loop; an upstream that worked on a call longer and then dropped the connection is not asked again.
 */
const IDLE_RACE_WINDOW_MS = 1000;

/**
 * How Bun's fetch reports a request that never left: the connection refused, or the host's name not
 * resolved (Bun 1.x: ECONNREFUSED, ENOTFOUND; FailedToOpenSocket for a socket that never opened).
 * Nothing was sent, so the upstream certainly did not take it (ProviderError.notAccepted).
 */
export const NOT_SENT = new Set([
  "ECONNREFUSED",
  "ConnectionRefused",
  "ENOTFOUND",
  "EAI_AGAIN",
  "FailedToOpenSocket",
]);

/**
 * The one outbound fetch to an upstream API, and its answer to the keep-alive race: a pooled
 * connection the upstream closes as idle (its keep-alive timeout) just as the next request is written
 * on it. An HTTP server closes an idle connection only when no request is in progress on it, so it
 * had not read that request and did not process it. Bun's fetch reports that close as ECONNRESET,
 * exactly as it reports a server that read the request and then dropped the connection, and does not
 * say whether the connection was reused; so what may be sent again depends on the request:
 *
 * - GET and HEAD: pooled; Bun's fetch itself sends them once more when a reused connection drops
 *   (test/providers/fal/fal-faults.test.ts sees two drops for one status read).
 * - `resend: "idle-close"` (chat calls): pooled; a close or reset before the response head (fetch
 *   rejected: no Response), within IDLE_RACE_WINDOW_MS of the send, is sent once more on a new
 *   connection (`keepalive: false`). Never a refusal, a DNS failure, a timeout or a streamed body;
 *   a second failure is the caller's to map. Were it the rare upstream that read the call and then
 *   dropped it, the client is still charged once, for the reply it gets (docs/chat.md).
 * - Every other request (media submits, uploads, cancels): sent on a new connection of its own
 *   (`keepalive: false`), never on a pooled one an upstream may close as idle, so the race cannot hit
 *   it, and a drop after sending stays what it was: an unknown outcome, never sent twice by us (a
 *   synchronous image call or a fal submit may have been run and billed). The cost is a connection
 *   set-up per submit (a TLS handshake, tens of ms) against generations of seconds to minutes.
 */
export async function fetchUpstream(
  url: string,
  init: RequestInit,
  resend: "never" | "idle-close" = "never",
): Promise<Response> {
  const method = (init.method ?? "GET").toUpperCase();
  if (method === "GET" || method === "HEAD") return await fetch(url, init);
  if (resend === "never") return await fetch(url, { ...init, keepalive: false });
  const sentAt = performance.now();
  try {
    return await fetch(url, init);
  } catch (err) {
    if (
      init.signal?.aborted ||
      !CLOSED_BEFORE_ANSWER.has((err as { code?: string }).code ?? "") ||
      performance.now() - sentAt > IDLE_RACE_WINDOW_MS ||
      init.body instanceof ReadableStream
    )
      throw err;
    log("info", "upstream closed the connection before answering; sent again on a new connection", {
      upstream: new URL(url).origin,
    });
    return await fetch(url, { ...init, keepalive: false });
  }
}

/**
 * fetch for upstream APIs with the transport half of the mapping: connection failures, timeouts
 * and 429/502/503/504 -> "capacity" (with Retry-After); the job's own abort is rethrown as is.
 * Other statuses are returned for the caller to read. `who` names the upstream in messages.
 */
export async function upstreamFetch(
  url: string,
  init: RequestInit,
  call: UpstreamCall,
  who = "The upstream",
): Promise<Response> {
  let res: Response;
  try {
    res = await fetchUpstream(url, {
      ...init,
      redirect: "error",
      signal: AbortSignal.any([call.signal, AbortSignal.timeout(call.timeoutMs)]),
    });
  } catch (err) {
    if (call.signal.aborted) throw err;
    const why = (err as Error).name === "TimeoutError" ? "timed out" : "could not be reached";
    const notAccepted = NOT_SENT.has((err as { code?: string }).code ?? "");
    throw new ProviderError("capacity", `${who} ${why}.`, { notAccepted });
  }
  if (
    (res.status === 429 || res.status === 502 || res.status === 503 || res.status === 504) &&
    !call.isOutcome?.(res)
  ) {
    await res.body?.cancel().catch(() => {});
    const retry = Number(res.headers.get("retry-after"));
    throw new ProviderError("capacity", `${who} is busy.`, {
      ...(Number.isFinite(retry) && retry > 0 ? { retryAfterMs: retry * 1000 } : {}),
      status: res.status,
      notAccepted: true, // an answer: it refused the request
    });
  }
  return res;
}

/**
 * JSON from an upstream API with the gateway's error mapping, shared by every provider:
 * - connection failures, timeouts, 429, 502, 503, 504 -> "capacity" (back off, retry within the time limit);
 * - other 4xx -> "input" (the upstream refused the input: fail, release);
 * - other 5xx and malformed JSON -> "failed".
 * Messages are ours; the upstream's status and words are the error's `status` and `detail`.
 * The job's own signal (time limit, shutdown) is rethrown as is.
 */
export async function upstreamJson<T = unknown>(
  url: string,
  init: RequestInit,
  call: UpstreamCall,
): Promise<{ status: number; body: T; headers: Headers }> {
  return await readJsonAnswer(await upstreamFetch(url, init, call), call);
}

/** The second half of `upstreamJson`: the status and body mapping of an answer already fetched. */
export async function readJsonAnswer<T = unknown>(
  res: Response,
  call: UpstreamCall,
): Promise<{ status: number; body: T; headers: Headers }> {
  const text = await res.text().catch(() => "");
  if (res.status >= 400) {
    throw new ProviderError(
      res.status >= 500 ? "failed" : "input",
      res.status >= 500 ? "The upstream failed the call." : "The upstream refused the call.",
      {
        status: res.status,
        detail: upstreamDetail(text),
        secret: call.secret,
        notAccepted: res.status >= 500,
      },
    );
  }
  if (!text) return { status: res.status, body: null as T, headers: res.headers };
  try {
    return { status: res.status, body: JSON.parse(text) as T, headers: res.headers };
  } catch {
    throw new ProviderError("failed", "The upstream sent a malformed answer (not JSON).", {
      status: res.status,
      detail: text,
      secret: call.secret,
    });
  }
}

/**
 * The upstream's own words for `ProviderError.detail` (the operator's log, never a client): the
 * message of a common error shape, else the body as it came.
 */
export function upstreamDetail(text: string): string {
  return upstreamMessage(text).slice(2) || text;
}

/** A short message from common error bodies ({error: {message}}, {error: "..."}, {detail: ...}). */
export function upstreamMessage(text: string): string {
  try {
    const b = JSON.parse(text) as { error?: unknown; detail?: unknown; message?: unknown };
    const e = b.error;
    const m =
      typeof e === "string"
        ? e
        : e && typeof e === "object" && typeof (e as { message?: unknown }).message === "string"
          ? (e as { message: string }).message
          : typeof b.detail === "string"
            ? b.detail
            : typeof b.message === "string"
              ? b.message
              : null;
    return m ? `: ${m.slice(0, 300)}` : "";
  } catch {
    return "";
  }
}

export { redact } from "./types.ts";

/** Applies a model's input_map (gateway field -> upstream field) to the top level of an input. */
export function mapInput(
  input: Record<string, unknown>,
  map: Record<string, string>,
): Record<string, unknown> {
  const { sandbox: _sandbox, ...rest } = input;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) out[map[k] ?? k] = v;
  return out;
}
