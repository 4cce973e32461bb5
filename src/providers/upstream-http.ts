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
    res = await fetch(url, {
      ...init,
      redirect: "error",
      signal: AbortSignal.any([call.signal, AbortSignal.timeout(call.timeoutMs)]),
    });
  } catch (err) {
    if (call.signal.aborted) throw err;
    const why = (err as Error).name === "TimeoutError" ? "timed out" : "could not be reached";
    throw new ProviderError("capacity", `${who} ${why}.`);
  }
  if (
    (res.status === 429 || res.status === 502 || res.status === 503 || res.status === 504) &&
    !call.isOutcome?.(res)
  ) {
    await res.body?.cancel().catch(() => {});
    const retry = Number(res.headers.get("retry-after"));
    throw new ProviderError(
      "capacity",
      `${who} is busy (${res.status}).`,
      Number.isFinite(retry) && retry > 0 ? retry * 1000 : undefined,
      res.status,
    );
  }
  return res;
}

/**
 * JSON from an upstream API with the gateway's error mapping, shared by every provider:
 * - connection failures, timeouts, 429, 502, 503, 504 -> "capacity" (back off, retry within the time limit);
 * - other 4xx -> "input" (the upstream refused the input: fail, release), with the upstream's message;
 * - other 5xx and malformed JSON -> "failed".
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
      redact(`The upstream answered ${res.status}${upstreamMessage(text)}.`, call.secret),
      undefined,
      res.status,
    );
  }
  if (!text) return { status: res.status, body: null as T, headers: res.headers };
  try {
    return { status: res.status, body: JSON.parse(text) as T, headers: res.headers };
  } catch {
    throw new ProviderError(
      "failed",
      `The upstream sent a malformed answer (${res.status}, not JSON).`,
      undefined,
      res.status,
    );
  }
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

export function redact(text: string, secret?: string | null): string {
  return secret ? text.split(secret).join("[redacted]") : text;
}

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
