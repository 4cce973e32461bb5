import type { ProviderSettings } from "../../config/schema.ts";
import { stripTrailingSlashes } from "../../lib/url.ts";
import type { Provider, ProviderJob, ProviderResult } from "../types.ts";
import { ProviderError, type ProviderErrorOptions } from "../types.ts";
import { upstreamJson } from "../upstream-client.ts";

/** A cancel is a courtesy on the way out: it must not hold up a shutdown or a failing job. */
const CANCEL_TIMEOUT_MS = 3000;

/**
 * What the adapters of a predictions API share (Replicate's, and a cog server's, which is the same
 * model container's API): the base URL and key, resuming a job that holds a prediction id, the
 * headers, the cancel and our "failed" errors.
 */
export abstract class PredictionsProvider implements Provider {
  protected readonly base: string;
  protected readonly secret: string | null;

  constructor(
    readonly name: string,
    protected readonly cfg: ProviderSettings,
  ) {
    this.base = stripTrailingSlashes(cfg.baseUrl);
    this.secret = cfg.apiKey;
  }

  resumable(job: { upstreamId: string | null }): boolean {
    return typeof job.upstreamId === "string" && job.upstreamId.length > 0;
  }

  abstract run(job: ProviderJob): Promise<ProviderResult>;

  /** `POST /predictions/{id}/cancel`. Best effort, never throws: a short timeout of its own (job.signal may already be aborted). */
  protected async cancel(id: string): Promise<void> {
    try {
      await upstreamJson(
        `${this.base}/predictions/${encodeURIComponent(id)}/cancel`,
        { method: "POST", headers: this.headers(false) },
        {
          timeoutMs: Math.min(this.cfg.timeoutMs, CANCEL_TIMEOUT_MS),
          signal: new AbortController().signal,
          secret: this.secret,
        },
      );
    } catch {
      // ignored: the prediction may already be over, or the upstream unreachable
    }
  }

  /** JSON, and the key as Bearer (cog itself takes none: one set goes to a proxy in front of it). */
  protected headers(json: boolean): Record<string, string> {
    return {
      accept: "application/json",
      ...(json ? { "content-type": "application/json" } : {}),
      ...(this.secret ? { authorization: `Bearer ${this.secret}` } : {}),
    };
  }

  /** A "failed" error with our message; `from` carries what the upstream said (status, detail) for the log. */
  protected fail(message: string, from: Pick<ProviderErrorOptions, "status" | "detail"> = {}): ProviderError {
    return new ProviderError("failed", message, {
      ...(from.status !== undefined ? { status: from.status } : {}),
      detail: from.detail ?? null,
      secret: this.secret,
    });
  }
}
