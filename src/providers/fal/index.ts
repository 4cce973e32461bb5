import type { ProviderSettings } from "../../config/schema.ts";
import { stripTrailingSlashes } from "../../lib/url.ts";
import { PriorLines } from "../common.ts";
import {
  type Provider,
  ProviderError,
  type ProviderErrorOptions,
  type ProviderJob,
  type ProviderResult,
  ShutdownError,
} from "../types.ts";
import { mapInput, readJsonAnswer, redact, upstreamFetch, upstreamJson } from "../upstream-client.ts";
import { buildRequestUrls, checkRequestId, type FalRequestUrls, falModelId, trustedUrl } from "./endpoint.ts";
import { mapFalResult } from "./outputs.ts";
import { falDetail, submitToFal } from "./submit.ts";

export { falAppId } from "./endpoint.ts";
export { mapFalResult } from "./outputs.ts";

/** A cancel is a courtesy on the way out: it must not hold up a shutdown or a failing job for long. */
const CANCEL_TIMEOUT_MS = 5000;
/** Longest wait between two polls while fal is busy (429/503/unreachable). */
const MAX_BACKOFF_MS = 30_000;
/** Upstream log lines forwarded per attempt (a chatty model must not flood the job log). */
const MAX_LOG_LINES = 500;

type Obj = Record<string, unknown>;

export interface FalProviderOptions {
  /**
   * Whether an abort should cancel the request on fal (so fal stops and stops billing). Default:
   * every abort except the worker pool's shutdown (a ShutdownError reason), whose job the next start
   * resumes.
   */
  cancelOnAbort?: (reason: unknown) => boolean;
}

const defaultCancelOnAbort = (reason: unknown) => !(reason instanceof ShutdownError);

/**
 * The fal provider (https://queue.fal.run): submit to the queue, record fal's request_id at once,
 * poll its status (forwarding fal's log lines), read the result and hand back the media URLs for
 * the worker to copy into the gateway's store. A job with a known request_id is resumed, never
 * submitted again. See docs/providers/fal.md.
 */
export function createFalProvider(
  name: string,
  cfg: ProviderSettings,
  opts: FalProviderOptions = {},
): Provider {
  const base = stripTrailingSlashes(cfg.baseUrl);
  const cancelOnAbort = opts.cancelOnAbort ?? defaultCancelOnAbort;
  return {
    name,
    resumable: (job) => typeof job.upstreamId === "string" && job.upstreamId !== "",
    run: (job) => new FalRun(base, cfg, job, cancelOnAbort).run(),
  };
}

class FalRun {
  private readonly headers: Record<string, string>;
  private readonly secret: string | null;
  private readonly seenLogs = new Set<string>();
  /** Lines already in the job's log from earlier attempts, skipped once each. */
  private prior = PriorLines.none;
  private forwarded = 0;

  constructor(
    private readonly base: string,
    private readonly cfg: ProviderSettings,
    private readonly job: ProviderJob,
    private readonly cancelOnAbort: (reason: unknown) => boolean,
  ) {
    this.secret = cfg.apiKey;
    this.headers = cfg.apiKey ? { authorization: `Key ${cfg.apiKey}` } : {};
  }

  async run(): Promise<ProviderResult> {
    const job = this.job;
    const modelId = falModelId(job.model.upstream_model ?? job.model.id);
    let req: FalRequestUrls;
    if (job.upstreamId) {
      req = buildRequestUrls(this.base, modelId, checkRequestId(job.upstreamId));
      // fal answers every log line so far on each poll: those an earlier attempt forwarded are
      // skipped, so a resumed job's log shows each line once.
      this.prior = await PriorLines.of(job);
      this.log(`fal: resuming request ${req.id}`);
    } else {
      req = await this.submit(modelId);
    }
    let body: unknown;
    try {
      body = await this.readResult(req, await this.waitForCompletion(req));
    } catch (err) {
      if (job.signal.aborted && this.cancelOnAbort(job.signal.reason)) await this.cancel(req);
      throw err;
    }
    const result = mapFalResult(job.model, body);
    this.log(`fal: request ${req.id} completed with ${result.outputs.length} output(s)`);
    return result;
  }

  private async submit(modelId: string): Promise<FalRequestUrls> {
    const reply = await submitToFal({
      url: `${this.base}/${modelId}`,
      body: mapInput(this.job.input, this.job.model.input_map),
      headers: this.headers,
      timeoutMs: this.cfg.timeoutMs,
      signal: this.job.signal,
      secret: this.secret,
    });
    const id = checkRequestId(reply.request_id);
    // Durable before anything else: from here on a restart resumes this request instead of paying twice.
    await this.job.setUpstreamId(id);
    const built = buildRequestUrls(this.base, modelId, id);
    const position =
      typeof reply.queue_position === "number" ? ` (queue position ${reply.queue_position})` : "";
    this.log(`fal: submitted request ${id}${position}`);
    return {
      id,
      statusUrl: trustedUrl(this.base, reply.status_url) ?? built.statusUrl,
      resultUrl: trustedUrl(this.base, reply.response_url) ?? built.resultUrl,
      cancelUrl: trustedUrl(this.base, reply.cancel_url) ?? built.cancelUrl,
    };
  }

  /** Polls until COMPLETED; returns the final status body. Busy answers back off, never fail the job. */
  private async waitForCompletion(req: FalRequestUrls): Promise<Obj> {
    const url = new URL(req.statusUrl);
    url.searchParams.set("logs", "1");
    let lastState = "";
    let busy = 0;
    for (;;) {
      let body: unknown;
      try {
        body = (await upstreamJson(url.href, { method: "GET", headers: this.headers }, this.call())).body;
      } catch (err) {
        if (this.job.signal.aborted) throw this.aborted();
        if (err instanceof ProviderError && err.kind === "capacity") {
          busy++;
          await this.backoff(busy, err, "status check");
          continue;
        }
        if (err instanceof ProviderError && err.kind === "input") {
          // A 4xx on a request fal accepted earlier: fal no longer knows it (404) or will not show it.
          throw err.restated("failed", `fal lost track of request ${req.id}.`);
        }
        throw err instanceof ProviderError
          ? err.restated("failed", `Checking fal request ${req.id} failed: ${err.message}`)
          : err;
      }
      busy = 0;
      if (typeof body !== "object" || body === null || Array.isArray(body)) {
        throw new ProviderError("failed", `fal sent a malformed status for request ${req.id}.`);
      }
      const s = body as Obj;
      this.forwardLogs(s.logs);
      const state = s.status;
      if (state === "COMPLETED") return s;
      // fal documents IN_QUEUE, IN_PROGRESS and COMPLETED; a FAILED or CANCELED some of its queues
      // (and proxies) send is final too, with its error when one is given.
      if (state === "FAILED") throw this.failure(req, s.error ?? s.detail, s.error_type);
      if (state === "CANCELED" || state === "CANCELLED") {
        throw new ProviderError("failed", `fal cancelled request ${req.id}.`, {
          detail: detailOf(s.error ?? s.detail),
          secret: this.secret,
        });
      }
      if (state !== "IN_QUEUE" && state !== "IN_PROGRESS") {
        throw new ProviderError("failed", `fal sent an unknown status for request ${req.id}.`, {
          detail: typeof state === "string" ? `status "${state}"` : "no status",
          secret: this.secret,
        });
      }
      if (state !== lastState) {
        const position = typeof s.queue_position === "number" ? ` (position ${s.queue_position})` : "";
        this.log(state === "IN_QUEUE" ? `fal: in queue${position}` : "fal: in progress");
        lastState = state;
      }
      await this.sleep(this.cfg.pollIntervalMs);
    }
  }

  private async readResult(req: FalRequestUrls, status: Obj): Promise<unknown> {
    // Newer fal queues put a failed request's error in the COMPLETED status itself.
    if (typeof status.error === "string" && status.error !== "") {
      throw this.failure(req, status.error, status.error_type);
    }
    // A finished request's stored error is answered with the status it ended with, 503 or 504
    // included, marked by X-Fal-Error-Type (docs.fal.ai "Request Error Types"). It is final: read
    // as busy it would be re-read until the job's time limit and fal's message lost.
    const call = { ...this.call(), isOutcome: (res: Response) => res.headers.has(ERROR_TYPE_HEADER) };
    let busy = 0;
    for (;;) {
      try {
        const res = await upstreamFetch(req.resultUrl, { method: "GET", headers: this.headers }, call, "fal");
        const errorType = res.headers.get(ERROR_TYPE_HEADER);
        if (res.status >= 400 && errorType !== null) {
          const text = await res.text().catch(() => "");
          throw this.failure(req, parsed(text)?.detail, errorType, res.status);
        }
        return (await readJsonAnswer(res, call)).body;
      } catch (err) {
        if (this.job.signal.aborted) throw this.aborted();
        if (err instanceof ProviderError && err.kind === "capacity") {
          busy++;
          await this.backoff(busy, err, "result read");
          continue;
        }
        if (err instanceof FalFailure) throw err;
        // fal answers a failed request's result with an error status and {detail}.
        if (err instanceof ProviderError)
          throw err.restated("failed", `fal reports request ${req.id} failed: ${err.message}`);
        throw err;
      }
    }
  }

  /**
   * The job's failure: our sentence naming the request and fal's machine-readable error_type when it
   * is a code of fal's fixed vocabulary (docs.fal.ai "Request Error Types": request_timeout,
   * runner_disconnected, ...); fal's own words (its detail) and the status go to `detail` only.
   */
  private failure(req: FalRequestUrls, detail: unknown, errorType: unknown, status?: number): FalFailure {
    const type = typeof errorType === "string" && ERROR_TYPE.test(errorType) ? ` (${errorType})` : "";
    const other = typeof errorType === "string" && type === "" ? `error_type ${errorType}: ` : "";
    return new FalFailure(`fal reports request ${req.id} failed${type}.`, {
      ...(status !== undefined ? { status } : {}),
      detail: other + detailOf(detail),
      secret: this.secret,
    });
  }

  /** Best effort, never throws: asks fal to drop (queued) or stop (running) the request. */
  private async cancel(req: FalRequestUrls): Promise<void> {
    const call = {
      timeoutMs: Math.min(this.cfg.timeoutMs, CANCEL_TIMEOUT_MS),
      signal: new AbortController().signal,
      secret: this.secret,
    };
    try {
      await upstreamJson(req.cancelUrl, { method: "PUT", headers: this.headers }, call);
      this.log(`fal: cancelled request ${req.id}`);
    } catch {
      this.log(`fal: could not cancel request ${req.id}`);
    }
  }

  private call() {
    return { timeoutMs: this.cfg.timeoutMs, signal: this.job.signal, secret: this.secret };
  }

  private async backoff(streak: number, err: ProviderError, what: string): Promise<void> {
    const doubled = this.cfg.pollIntervalMs * 2 ** Math.min(streak, 16);
    const wait = Math.max(this.cfg.pollIntervalMs, Math.min(MAX_BACKOFF_MS, err.retryAfterMs ?? doubled));
    if (streak === 1 || streak % 10 === 0) {
      this.log(`fal: ${what}: ${err.message} Retrying in ${wait} ms.`);
    }
    await this.sleep(wait);
  }

  private forwardLogs(logs: unknown): void {
    if (!Array.isArray(logs)) return;
    for (const entry of logs) {
      if (typeof entry !== "object" || entry === null) continue;
      const { message, timestamp } = entry as { message?: unknown; timestamp?: unknown };
      if (typeof message !== "string" || message.trim() === "") continue;
      // fal returns every line so far on each poll: dedupe on (timestamp, message).
      const key = `${String(timestamp)}\u0000${message}`;
      if (this.seenLogs.has(key)) continue;
      this.seenLogs.add(key);
      const line = this.clean(`fal: ${message.trim().slice(0, 500)}`);
      if (this.prior.take(line)) continue;
      this.forwarded++;
      if (this.forwarded <= MAX_LOG_LINES) this.job.log(line);
      else if (this.forwarded === MAX_LOG_LINES + 1) this.log("fal: further log lines omitted");
    }
  }

  private log(message: string): void {
    this.job.log(this.clean(message));
  }

  private clean(text: string): string {
    return redact(text, this.secret);
  }

  private aborted(): unknown {
    return this.job.signal.reason ?? new Error("aborted");
  }

  private sleep(ms: number): Promise<void> {
    const signal = this.job.signal;
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(this.aborted());
      const onAbort = () => {
        clearTimeout(timer);
        reject(this.aborted());
      };
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}

/** fal's header naming why a request failed (request_timeout, runner_disconnected, ...). */
const ERROR_TYPE_HEADER = "x-fal-error-type";

/**
 * An error_type shown to the client: a code of fal's fixed vocabulary is lower snake case (64
 * characters leave room for codes fal adds); anything else is the upstream's text, kept for the log.
 */
const ERROR_TYPE = /^[a-z][a-z0-9_]{0,63}$/;

/** A failure fal reported for the request itself: final, never retried or re-wrapped. */
class FalFailure extends ProviderError {
  constructor(message: string, o: ProviderErrorOptions) {
    super("failed", message, o);
  }
}

function parsed(text: string): Obj | null {
  try {
    const b = JSON.parse(text) as unknown;
    return typeof b === "object" && b !== null && !Array.isArray(b) ? (b as Obj) : null;
  } catch {
    return null;
  }
}

/** fal's detail (a string, or FastAPI's [{loc, msg}]) for the log; "" without one. */
function detailOf(detail: unknown): string {
  if (typeof detail === "string") return detail.trim();
  return Array.isArray(detail) ? falDetail(JSON.stringify({ detail })) : "";
}
