import type { Model } from "../catalog/model.ts";
import { log } from "../lib/log.ts";

/** One media file produced by a job: bytes in hand (in-process providers) or a URL to copy from. */
export interface MediaOutput {
  kind: "image" | "video" | "audio";
  contentType: string;
  bytes?: Uint8Array;
  url?: string;
  width?: number;
  height?: number;
  /** Seconds, for video and audio. */
  duration?: number;
}

export interface ProviderResult {
  outputs: MediaOutput[];
  /**
   * Units the provider claims it delivered (an upstream's reported duration). The settlement
   * measures the delivered files and uses this only where they cannot be measured nor the outputs
   * declare it; it can lower the charge, never raise it (docs/money.md, "Charge equals delivery").
   */
  actualUnits?: number | null;
  /** Extra non-media fields passed through to the output (seed, timings, ...). */
  extra?: Record<string, unknown>;
}

/**
 * Where an upstream that answers by webhook (cog) posts its final answer about one job, and how the
 * adapter waits for it. The answer is recorded durably by whichever instance receives it
 * (src/providers/cog/webhooks.ts), so a worker on another instance, or after a restart, reads it.
 */
export interface ProviderCallback {
  /** The signed URL the upstream posts to (its token covers the provider and the job). */
  url(): string;
  /** The final answer recorded for this job, or null while there is none. */
  recorded(): Promise<unknown>;
  /** Resolves with the final answer once one is recorded; rejects with `signal.reason` on abort. */
  wait(signal: AbortSignal): Promise<unknown>;
}

export interface ProviderJob {
  id: string;
  model: Model;
  input: Record<string, unknown>;
  attempt: number;
  /** The upstream's id from an earlier attempt: resume it instead of submitting again. */
  upstreamId: string | null;
  signal: AbortSignal;
  /**
   * When the job's time limit ends (epoch ms): the worker aborts `signal` then. An upstream that
   * takes a deadline of its own is given it, so it stops (and stops billing) even if our cancel is lost.
   */
  deadlineAt?: number;
  /**
   * The lines already in the job's log, from earlier attempts: a resumed adapter whose upstream
   * repeats every log line so far on each poll skips those it forwarded before.
   */
  priorLogs?(): Promise<string[]>;
  /** Appends a line to the job's logs (written in the background, in order; never throws). */
  log(message: string): void;
  /** The job's webhook from its upstream, for providers that answer by webhook (cog). */
  callback?: ProviderCallback;
  /** Record the upstream's id as soon as it is known (durably, before waiting on it). */
  setUpstreamId(id: string): Promise<void>;
  /**
   * Pixel size of the uploaded image a top-level input field referred to (as a file id, before it
   * became a signed URL), as measured at upload; null for a plain URL or an unmeasured file. The
   * same measurement priced the job (an upscale's source), so a provider can deliver what was priced.
   */
  inputImageSize?(field: string): Promise<{ width: number; height: number } | null>;
  /**
   * The bytes of an input value a provider must send its upstream itself: a file id or a link to one
   * of our uploads is read from the store (the job's account's files only), any other URL is fetched
   * through the outbound policy (src/files/input-reader.ts). Failures are ProviderErrors with fixed
   * messages that never repeat what the URL answered.
   */
  readInput(
    value: string,
    o: { what: string; maxBytes: number; timeoutMs: number },
  ): Promise<{ bytes: Uint8Array; contentType: string | null }>;
}

/** Why a provider gave up, which decides what the queue does next. */
export type ProviderErrorKind =
  | "input" // the upstream refused the input: fail, release
  | "capacity" // busy or rate limited: back off and retry within the time limit
  | "failed"; // anything else: fail, release

/** Longest `ProviderError.detail` kept: enough for an upstream's error sentence and its node or field. */
export const DETAIL_MAX_CHARS = 500;

export interface ProviderErrorOptions {
  /** How long to wait before retrying ("capacity"), from the upstream's Retry-After. */
  retryAfterMs?: number;
  /** The upstream's HTTP status when it answered one (adapters may refine the mapping on it). */
  status?: number;
  /** The upstream's own words (an error body, a node's exception): see `ProviderError.detail`. */
  detail?: string | null;
  /** The provider's key: cut out of the detail before it is bounded, so no prefix of it is kept. */
  secret?: string | null;
  /** See `ProviderError.notAccepted`. */
  notAccepted?: boolean;
}

/**
 * A provider's failure. `message` is ours only: a fixed sentence per case that may name the
 * provider, the upstream request id we hold and a code from a documented fixed vocabulary, and it
 * becomes the client-visible error of the job or chat call. What the upstream said (its body, its
 * status) is never in it: an upstream may repeat a client's input, another tenant's data or its own
 * internals, so it goes to `detail` and `status`, which only the server's log shows
 * (`logProviderFailure`).
 */
export class ProviderError extends Error {
  readonly retryAfterMs?: number;
  readonly status?: number;
  /** The upstream's own words, redacted of the provider's key and at most DETAIL_MAX_CHARS long. */
  readonly detail?: string;
  /**
   * The upstream certainly did not take the request: the connection was refused or its name did not
   * resolve (nothing was sent), or it answered 429 or 5xx. Set by upstreamFetch and readJsonAnswer
   * (upstream-client.ts). A timeout or a connection dropped after sending is never this: the
   * upstream may have received it. The worker moves a job to its next route only on such an error
   * raised before any upstream id was recorded (docs/providers.md "Fallback").
   */
  readonly notAccepted: boolean;

  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    o: ProviderErrorOptions = {},
  ) {
    super(message);
    this.name = "ProviderError";
    this.notAccepted = o.notAccepted ?? false;
    if (o.retryAfterMs !== undefined) this.retryAfterMs = o.retryAfterMs;
    if (o.status !== undefined) this.status = o.status;
    const detail = o.detail?.trim();
    if (detail) {
      const clean = redact(detail, o.secret);
      this.detail = clean.length > DETAIL_MAX_CHARS ? `${clean.slice(0, DETAIL_MAX_CHARS - 1)}…` : clean;
    }
  }

  /** The same failure under our message for its context (and kind), keeping what the upstream said. */
  restated(kind: ProviderErrorKind, message: string): ProviderError {
    return new ProviderError(kind, message, {
      ...(this.retryAfterMs !== undefined ? { retryAfterMs: this.retryAfterMs } : {}),
      ...(this.status !== undefined ? { status: this.status } : {}),
      detail: this.detail ?? null,
      notAccepted: this.notAccepted,
    });
  }
}

/** The provider's key cut out of a text: it must never reach logs, errors or records. */
export function redact(text: string, secret?: string | null): string {
  return secret ? text.split(secret).join("[redacted]") : text;
}

/**
 * Writes what a provider failure hid from the client (the upstream's status and words) to the
 * server's log, under the request id the client and the console show, so an operator can find why a
 * job or chat call failed. Called where the failure becomes the client's error: the worker's fail
 * path and the chat door's failChat.
 */
export function logProviderFailure(err: ProviderError, requestId: string, provider: string): void {
  // An error of ours alone (a sandbox failure, a refused input URL, which logs its own line) hid nothing.
  if (err.status === undefined && err.detail === undefined) return;
  log("warn", "upstream error", {
    request_id: requestId,
    provider,
    kind: err.kind,
    message: err.message,
    status: err.status ?? null,
    detail: err.detail ?? null,
  });
}

/**
 * The abort reason of a job whose worker pool is shutting down. The job stays IN_PROGRESS and the
 * next start resumes it, so an adapter must leave the upstream request running (no cancel). Adapters
 * test `signal.reason instanceof ShutdownError`, never the message.
 */
export class ShutdownError extends Error {}

export interface Provider {
  readonly name: string;
  /** Can a job whose worker died be run again safely? (true for the in-process sandbox) */
  resumable(job: { upstreamId: string | null }): boolean;
  run(job: ProviderJob): Promise<ProviderResult>;
}
