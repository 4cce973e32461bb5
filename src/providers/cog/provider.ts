import type { ProviderSettings } from "../../config/schema.ts";
import { LogForwarder } from "../replicate/logs.ts";
import { mapOutput, mediaKindOf } from "../replicate/outputs.ts";
import { PredictionsProvider } from "../replicate/predictions-base.ts";
import type { Provider, ProviderCallback, ProviderJob, ProviderResult } from "../types.ts";
import { ProviderError, ShutdownError } from "../types.ts";
import { mapInput, upstreamJson } from "../upstream-client.ts";
import { COG_FINAL_STATUSES } from "./webhooks.ts";

type MediaKind = "image" | "video" | "audio";

/**
 * The webhook events asked for: the final one only. cog sends `start`, `output` and `logs` too by
 * default (coglet routes.rs `default_webhook_events_filter`); nothing of the gateway reads them.
 */
const EVENTS = ["completed"];

/**
 * A cog server (github.com/replicate/cog; read at coglet, crates/coglet/src/transport/http/routes.rs,
 * 2026-08) as a gateway provider. The prediction's id is the job's request id, created with
 * `PUT /predictions/{id}`, `Prefer: respond-async` and the job's signed webhook URL; the final
 * webhook is recorded durably by whichever instance receives it (./webhooks.ts) and the worker waits
 * for that record. cog has no GET of a prediction, and a PUT of an id it no longer runs starts a new
 * prediction (coglet forgets a prediction as it ends: `remove_prediction`), so a resumed job never
 * creates again: it waits for the record. See docs/providers.md "cog".
 */
export function createCogProvider(name: string, cfg: ProviderSettings): Provider {
  return new CogProvider(name, cfg);
}

class CogProvider extends PredictionsProvider {
  async run(job: ProviderJob): Promise<ProviderResult> {
    job.signal.throwIfAborted();
    const kind = mediaKindOf(job.model.kind);
    if (!kind) throw this.fail(`Model ${job.model.id}: cog serves media models, not kind ${job.model.kind}.`);
    const callback = job.callback;
    if (!callback)
      throw this.fail("cog predictions need the gateway's webhook route, which this worker lacks.");
    const id = job.id;
    if (job.upstreamId) {
      // Resume: cog accepted this prediction before the restart. Never PUT it again: were it over
      // already, cog would start it anew. Its final webhook is recorded, or will be (cog retries it).
      if (job.upstreamId !== id) throw this.fail("The stored cog prediction id is not this job's.");
      job.log(`resuming cog prediction ${id}: waiting for its webhook`);
    } else {
      await this.checkHealth(job);
      const early = await this.create(job, id, callback);
      await job.setUpstreamId(id); // durable before waiting, so a restart resumes it
      job.log(`cog prediction ${id} created`);
      if (early) return this.finish(job, id, early, kind);
    }
    return this.finish(job, id, await this.waitFinal(job, id, callback), kind);
  }

  /**
   * `GET /health-check` before the create (routes.rs `health_check`). A server that cannot be reached
   * has received nothing, so the job goes back to the queue ("capacity", back-off) instead of failing
   * as a lost create must; BUSY (every slot taken) and STARTING (setup running) back off without a
   * PUT; SETUP_FAILED and DEFUNCT (unusable until the server restarts) fail the job. READY,
   * UNHEALTHY, UNKNOWN and a server without the route go on to the create, whose answer decides.
   */
  private async checkHealth(job: ProviderJob): Promise<void> {
    let status: unknown;
    try {
      const answer = await upstreamJson(
        `${this.base}/health-check`,
        { method: "GET", headers: this.headers(false) },
        { timeoutMs: this.cfg.timeoutMs, signal: job.signal, secret: this.secret },
      );
      status = (answer.body as { status?: unknown } | null)?.status;
    } catch (err) {
      if (job.signal.aborted || !(err instanceof ProviderError)) throw err;
      if (err.kind === "capacity") throw err.restated("capacity", "The cog server is unavailable.");
      return; // another answer (an older server without the route): the create decides
    }
    if (status === "BUSY" || status === "STARTING") {
      // Nothing was sent: a model's next route may take the job (notAccepted).
      throw new ProviderError("capacity", "The cog server is busy.", {
        detail: `health-check ${status}`,
        notAccepted: true,
      });
    }
    if (status === "SETUP_FAILED" || status === "DEFUNCT") {
      throw this.fail("The cog server cannot run predictions.", { detail: `health-check ${status}` });
    }
  }

  /**
   * PUT /predictions/{id}: 202 accepted (or already running under this id: coglet answers the running
   * prediction, routes.rs `create_prediction_idempotent`), so null; a final prediction when the server
   * answered synchronously (200). 409: busy with another prediction (`AtCapacity`), retried later.
   */
  private async create(job: ProviderJob, id: string, callback: ProviderCallback): Promise<unknown> {
    const body = {
      id,
      input: mapInput(job.input, job.model.input_map),
      webhook: callback.url(),
      webhook_events_filter: EVENTS,
    };
    let answer: { status: number; body: unknown };
    try {
      answer = await upstreamJson(
        `${this.base}/predictions/${encodeURIComponent(id)}`,
        {
          method: "PUT",
          headers: { ...this.headers(true), prefer: "respond-async" },
          body: JSON.stringify(body),
        },
        { timeoutMs: this.cfg.timeoutMs, signal: job.signal, secret: this.secret },
      );
    } catch (err) {
      if (job.signal.aborted || !(err instanceof ProviderError)) throw err;
      // Refused before anything was sent: cog never saw the PUT, so backing off (or another route) is safe.
      if (err.notAccepted && err.status === undefined)
        throw err.restated("capacity", "The cog server could not be reached.");
      if (err.kind === "capacity" && err.status === undefined) {
        // The connection failed or timed out, possibly after cog received the PUT: the prediction
        // may be running. Sending it again could start it a second time once it is over (cog keeps
        // no finished prediction), so the job fails and its hold is released instead.
        throw this.fail(
          "cog's answer to the create was lost; not retried, since the prediction may be running.",
          {
            detail: err.message,
          },
        );
      }
      if (err.status === 409) {
        // Busy with another prediction (all slots taken): not an input error. Back off, try again.
        throw new ProviderError("capacity", "The cog server is busy.", {
          status: 409,
          detail: err.detail ?? null,
          secret: this.secret,
          notAccepted: true, // it answered: it refused the PUT
        });
      }
      if (err.status === 404 || err.status === 405) {
        throw this.fail("The cog server does not take predictions at PUT /predictions/{id}.", err);
      }
      if (err.status === 401 || err.status === 403)
        throw this.fail("The cog server refused the gateway.", err);
      // 422 (and 400): the model's input validation; 503: setup not finished (capacity); 500: failed.
      if (err.kind === "input") throw err.restated("input", "cog refused the prediction's input.");
      throw err;
    }
    if (answer.status === 200) {
      const status = (answer.body as { status?: unknown } | null)?.status;
      if (typeof status === "string" && COG_FINAL_STATUSES.has(status)) return answer.body;
    }
    return null;
  }

  /** The recorded final webhook; on abort (not shutdown) cog is asked to cancel the prediction. */
  private async waitFinal(job: ProviderJob, id: string, callback: ProviderCallback): Promise<unknown> {
    try {
      return await callback.wait(job.signal);
    } catch (err) {
      if (job.signal.aborted) {
        // Cancelled or past its time limit: stop cog's work. On shutdown leave it running: the
        // job resumes after the restart and its webhook is retried by cog until then.
        if (!(job.signal.reason instanceof ShutdownError)) await this.cancel(id);
        throw job.signal.reason ?? err;
      }
      throw err;
    }
  }

  private finish(job: ProviderJob, id: string, payload: unknown, kind: MediaKind): ProviderResult {
    if (!payload || typeof payload !== "object" || Array.isArray(payload))
      throw this.fail(`cog's answer about prediction ${id} is not a prediction object.`);
    const p = payload as { status?: unknown; output?: unknown; error?: unknown; logs?: unknown };
    new LogForwarder(job.log, this.secret).push(p.logs, true);
    if (p.status === "succeeded") {
      const { outputs, extra } = mapOutput(p.output ?? null, kind, "cog");
      if (outputs.length === 0)
        throw this.fail(`The cog prediction ${id} succeeded but its output holds no media.`);
      return Object.keys(extra).length > 0 ? { outputs, extra } : { outputs };
    }
    if (p.status === "failed") {
      // The prediction's error is the model's own text (it may repeat the input): the log's only.
      throw this.fail(`The cog prediction ${id} failed.`, {
        detail: typeof p.error === "string" ? p.error : null,
      });
    }
    if (p.status === "canceled") throw this.fail(`The cog prediction ${id} was canceled.`);
    throw this.fail(`cog sent an unknown status for prediction ${id}.`, {
      detail: `status ${String(p.status)}`,
    });
  }
}
