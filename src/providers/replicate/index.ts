import type { ProviderSettings } from "../../config/schema.ts";
import { PriorLines, sleep } from "../common.ts";
import type { Provider, ProviderJob, ProviderResult } from "../types.ts";
import { ProviderError, ShutdownError } from "../types.ts";
import { mapInput, upstreamJson } from "../upstream-client.ts";
import { LogForwarder } from "./logs.ts";
import { mapOutput, mediaKindOf } from "./outputs.ts";
import { PredictionsProvider } from "./predictions-base.ts";
import { parseUpstreamModel } from "./target.ts";

/** One prediction as Replicate answers it (create, get, cancel). Only the fields the gateway reads. */
interface Prediction {
  id: string;
  status: string;
  output: unknown;
  error: unknown;
  logs: unknown;
}

/** Longest wait between polls while Replicate answers 429/503 (or cannot be reached). */
const MAX_POLL_BACKOFF_MS = 60_000;
/** Consecutive 5xx / non-JSON poll answers tolerated before the job is failed. */
const MAX_POLL_FAILURES = 3;
const ID = /^[A-Za-z0-9_-]{1,128}$/;
/**
 * Final prediction statuses. "aborted" is a prediction whose Cancel-After deadline passed before it
 * started (replicate-javascript index.d.ts: Status = ... | "canceled" | "aborted").
 */
const TERMINAL = new Set(["succeeded", "failed", "canceled", "aborted"]);

/**
 * The Replicate predictions API (https://replicate.com/docs/reference/http) as a gateway provider.
 * See docs/providers/replicate.md.
 */
export function createReplicateProvider(name: string, cfg: ProviderSettings): Provider {
  return new ReplicateProvider(name, cfg);
}

class ReplicateProvider extends PredictionsProvider {
  async run(job: ProviderJob): Promise<ProviderResult> {
    job.signal.throwIfAborted();
    const kind = mediaKindOf(job.model.kind);
    if (!kind)
      throw this.fail(`Model ${job.model.id}: Replicate serves media models, not kind ${job.model.kind}.`);

    if (job.upstreamId) {
      // Resume: the prediction was created by an earlier attempt. Never create it again.
      if (!ID.test(job.upstreamId)) throw this.fail("The stored Replicate prediction id is malformed.");
      const prior = await PriorLines.of(job);
      job.log(`resuming Replicate prediction ${job.upstreamId}`);
      return this.follow(job, job.upstreamId, null, kind, prior);
    }
    const created = await this.create(job);
    await job.setUpstreamId(created.id); // durable before anything else, so a restart resumes it
    job.log(`Replicate prediction ${created.id} created`);
    return this.follow(job, created.id, created, kind);
  }

  private async create(job: ProviderJob): Promise<Prediction> {
    const model = job.model;
    const target = parseUpstreamModel(model.upstream_model);
    if (!target) {
      throw this.fail(
        `Model ${model.id}: upstream_model must be "owner/name", "owner/name:<version>" or a 64-hex version id.`,
      );
    }
    const input = mapInput(job.input, model.input_map);
    const url =
      target.kind === "model"
        ? `${this.base}/models/${encodeURIComponent(target.owner)}/${encodeURIComponent(target.name)}/predictions`
        : `${this.base}/predictions`;
    const body = target.kind === "model" ? { input } : { version: target.version, input };
    let answer: unknown;
    try {
      answer = (
        await upstreamJson(
          url,
          {
            method: "POST",
            headers: { ...this.headers(true), ...cancelAfter(job.deadlineAt) },
            body: JSON.stringify(body),
          },
          { timeoutMs: this.cfg.timeoutMs, signal: job.signal, secret: this.secret },
        )
      ).body;
    } catch (err) {
      if (job.signal.aborted || !(err instanceof ProviderError)) throw err;
      // A clean busy answer (429/502/503/504) carries its status; a network failure has none.
      // Refused before anything was sent (notAccepted): no prediction exists, backing off (or the
      // model's next route) is safe.
      if (err.notAccepted && err.status === undefined)
        throw err.restated("capacity", "Replicate could not be reached; nothing was sent.");
      if (err.kind === "capacity" && err.status === undefined) {
        // The connection dropped or timed out, possibly after Replicate received the create: a
        // prediction may exist (and be billed) that we hold no id for. Retrying ("capacity") could
        // run and bill it twice, so the job fails instead.
        throw this.fail(
          "Replicate's answer to the create was lost; not retried, since the prediction may exist.",
          { detail: err.message },
        );
      }
      const status = err.status ?? null;
      if (status === 401 || status === 403) {
        throw this.fail("Replicate refused the gateway's API token.", err);
      }
      if (status === 404) {
        throw this.fail(`Replicate does not know model ${model.upstream_model}.`, err);
      }
      // 422/400 stay "input" (Replicate's detail in the error's detail); 429/503 stay "capacity"
      // (with Retry-After); 500 and a non-JSON answer stay "failed".
      if (err.kind === "input") {
        throw err.restated("input", "Replicate refused the prediction's input.");
      }
      throw err;
    }
    const p = parsePrediction(answer);
    if (typeof p === "string") throw this.fail(`Replicate's answer to the create ${p}.`);
    return p;
  }

  /** Polls until the prediction ends, job.signal aborts, or polling gives up. */
  private async follow(
    job: ProviderJob,
    id: string,
    first: Prediction | null,
    kind: "image" | "video" | "audio",
    prior?: PriorLines,
  ): Promise<ProviderResult> {
    const signal = job.signal;
    const logs = new LogForwarder(job.log, this.secret, prior);
    const interval = Math.max(1, this.cfg.pollIntervalMs);
    let current = first;
    let delay = interval;
    let failures = 0;
    let busy = false;
    try {
      for (;;) {
        if (current) {
          const status = current.status;
          const terminal = TERMINAL.has(status);
          logs.push(current.logs, terminal);
          if (status === "succeeded") return this.result(id, current.output, kind);
          if (status === "failed") {
            // The prediction's error is the model's own text (it may repeat the input or a stack
            // trace): for the operator's log only.
            throw this.fail(`The Replicate prediction ${id} failed.`, {
              detail: predictionError(current.error),
            });
          }
          if (status === "canceled") throw this.fail(`The Replicate prediction ${id} was canceled.`);
          if (status === "aborted") {
            // Its Cancel-After deadline passed before it started: it never ran, and Replicate does
            // not bill it (replicate.com/changelog/2025-10-16-prediction-deadlines). Nothing to cancel.
            throw this.fail(
              `The Replicate prediction ${id} was aborted: the job's time limit passed before it started running.`,
            );
          }
          if (status !== "starting" && status !== "processing") {
            await this.cancel(id);
            throw this.fail(`Replicate sent an unknown status for prediction ${id}.`, {
              detail: `status "${status}"`,
            });
          }
        }
        await sleep(delay, signal);
        let answer: unknown;
        try {
          answer = (
            await upstreamJson(
              `${this.base}/predictions/${encodeURIComponent(id)}`,
              { method: "GET", headers: this.headers(false) },
              { timeoutMs: this.cfg.timeoutMs, signal, secret: this.secret },
            )
          ).body;
        } catch (err) {
          if (signal.aborted || !(err instanceof ProviderError)) throw err;
          current = null;
          if (err.kind === "capacity") {
            // 429/502/503/504 or a network hiccup while polling: the prediction runs on regardless.
            // Keep polling with back-off; only job.signal (time limit, shutdown) ends the wait.
            if (!busy) job.log("Replicate busy while polling; backing off");
            busy = true;
            delay = Math.min(MAX_POLL_BACKOFF_MS, Math.max(err.retryAfterMs ?? 0, delay * 2));
            continue;
          }
          if ((err.status ?? null) === 404) throw this.fail(`Replicate lost prediction ${id}.`, err);
          if (err.kind === "failed" && ++failures < MAX_POLL_FAILURES) {
            delay = Math.min(MAX_POLL_BACKOFF_MS, delay * 2);
            continue;
          }
          // Persistent 5xx / non-JSON, or a 4xx such as 401: stop, and release the prediction.
          await this.cancel(id);
          // err.message is ours (upstream-client's fixed sentences); Replicate's words are its detail.
          throw this.fail(`Polling Replicate about prediction ${id} failed: ${err.message}`, err);
        }
        const p = parsePrediction(answer);
        if (typeof p === "string") {
          await this.cancel(id);
          throw this.fail(`Replicate's answer about prediction ${id} ${p}.`);
        }
        if (p.id !== id) {
          await this.cancel(id);
          throw this.fail(`Replicate answered about another prediction when asked about ${id}.`, {
            detail: `prediction ${p.id}`,
          });
        }
        current = p;
        delay = interval;
        failures = 0;
        busy = false;
      }
    } catch (err) {
      if (signal.aborted) {
        // Stop promptly. On a time limit (or any other abort) ask Replicate to stop billing for the
        // prediction; on shutdown leave it running: the job resumes it after the restart.
        if (!(signal.reason instanceof ShutdownError)) await this.cancel(id);
        throw signal.reason ?? err;
      }
      throw err;
    }
  }

  private result(id: string, output: unknown, kind: "image" | "video" | "audio"): ProviderResult {
    const { outputs, extra } = mapOutput(output, kind);
    if (outputs.length === 0) {
      throw this.fail(`Replicate's prediction ${id} succeeded but its output holds no media URL.`);
    }
    return Object.keys(extra).length > 0 ? { outputs, extra } : { outputs };
  }
}

/**
 * Validates an answer as a prediction, or returns what is wrong with it (to finish a sentence).
 */
function parsePrediction(body: unknown): Prediction | string {
  if (!body || typeof body !== "object" || Array.isArray(body)) return "is not a prediction object";
  const b = body as Record<string, unknown>;
  if (typeof b.id !== "string" || b.id === "") return "has no prediction id";
  if (!ID.test(b.id)) return "has a malformed prediction id";
  if (typeof b.status !== "string" || b.status === "") return "has no prediction status";
  return {
    id: b.id,
    status: b.status,
    output: b.output ?? null,
    error: b.error ?? null,
    logs: b.logs ?? null,
  };
}

/**
 * The Cancel-After header of a create: the time left until the job's deadline, in whole seconds as a
 * duration ("587s"; Replicate's example is "1m"). Replicate then stops the prediction itself when
 * the gateway gives up on the job, even if our cancel is lost: aborted (not billed) if it has not
 * started, canceled if it is running (replicate.com/changelog/2025-10-16-prediction-deadlines).
 */
export function cancelAfter(deadlineAt: number | undefined, now = Date.now()): Record<string, string> {
  if (deadlineAt === undefined || !Number.isFinite(deadlineAt)) return {};
  return { "cancel-after": `${Math.max(1, Math.ceil((deadlineAt - now) / 1000))}s` };
}

/** A failed prediction's error, for the log: a string, or an object's message or detail. */
function predictionError(error: unknown): string | null {
  if (typeof error === "string") return error;
  if (error && typeof error === "object") {
    const m =
      (error as { message?: unknown; detail?: unknown }).message ?? (error as { detail?: unknown }).detail;
    if (typeof m === "string") return m;
  }
  return null;
}
