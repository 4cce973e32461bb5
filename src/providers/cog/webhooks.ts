import type { LinkSigner } from "../../files/signing.ts";
import { DomainError } from "../../lib/errors.ts";
import type { UpstreamCallbackStore } from "../callback-store.ts";
import type { ProviderCallback } from "../types.ts";

/**
 * A cog prediction's final statuses (cog's coglet, crates/coglet/src/prediction.rs `PredictionStatus`:
 * starting, processing, succeeded, failed, canceled). Only these are recorded: a `start`, `output` or
 * `logs` event changes nothing.
 */
export const COG_FINAL_STATUSES: ReadonlySet<string> = new Set(["succeeded", "failed", "canceled"]);

/** What the token signs: its own derived key (LinkSigner.signFor), never a link's. */
const PURPOSE = "cog webhook";
/**
 * How often a waiting worker reads the record. The instance that receives the webhook wakes its own
 * waiters at once; a waiter on another instance (PostgreSQL) finds the record within this: one
 * primary-key read a second per waiting cog job, against predictions of seconds to minutes.
 */
const POLL_MS = 1000;
/** A provider name as the config allows it in a URL path, bounded. */
const PROVIDER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/** A job's request id (a UUID), bounded loosely: the token decides. */
const JOB_ID = /^[A-Za-z0-9_-]{1,80}$/;

export interface CogWebhookDeps {
  store: UpstreamCallbackStore;
  signer: Pick<LinkSigner, "signFor" | "verifyFor">;
  /** The public address the cog server posts to (no trailing slash). */
  publicUrl: () => string;
  now?: () => number;
  pollMs?: number;
}

/**
 * The webhooks of cog servers (docs/providers.md "cog"): the signed URL each job's prediction is
 * created with, the check of what arrives there, the durable record of the final answer (the first
 * wins) and the waits of the workers on it. The URL's token is an HMAC of the provider and the job
 * with the server's link secret (its own derived key), so a forged webhook, or one signed for another
 * job or provider, is refused before its body is read.
 */
export class CogWebhooks {
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly now: () => number;
  private readonly pollMs: number;

  constructor(private readonly d: CogWebhookDeps) {
    this.now = d.now ?? Date.now;
    this.pollMs = d.pollMs ?? POLL_MS;
  }

  /** The webhook URL of a job run by cog provider `provider`. */
  url(provider: string, jobId: string): string {
    const token = this.d.signer.signFor(PURPOSE, signed(provider, jobId));
    return `${this.d.publicUrl()}/providers/cog/${encodeURIComponent(provider)}/${encodeURIComponent(jobId)}?token=${token}`;
  }

  /** The job's ProviderCallback (the URL is signed only when the adapter asks for it). */
  forJob(provider: string, jobId: string): ProviderCallback {
    return {
      url: () => this.url(provider, jobId),
      recorded: async () => await this.recorded(provider, jobId),
      wait: async (signal) => await this.wait(provider, jobId, signal),
    };
  }

  /** Refuses (403 forbidden) a webhook whose token is not ours for this provider and job. */
  authorize(provider: string, jobId: string, token: string | undefined): void {
    if (
      !token ||
      token.length > 64 ||
      !PROVIDER_NAME.test(provider) ||
      !JOB_ID.test(jobId) ||
      !this.d.signer.verifyFor(PURPOSE, signed(provider, jobId), token)
    ) {
      throw new DomainError("forbidden", "This webhook URL is not valid.");
    }
  }

  /**
   * Takes an authorized webhook's prediction: a final one is recorded (the first for the job wins,
   * a replay changes nothing) and wakes the job's waiting worker on this instance; any other status
   * is acknowledged and dropped. A body that is no prediction of this job is a 400, which cog does
   * not retry (webhook.rs `send_terminal` retries 429 and 5xx only).
   */
  async receive(
    provider: string,
    jobId: string,
    body: unknown,
  ): Promise<"recorded" | "duplicate" | "ignored"> {
    if (!body || typeof body !== "object" || Array.isArray(body))
      throw new DomainError("validation_error", "The webhook's body is not a prediction object.");
    const p = body as { id?: unknown; status?: unknown };
    if (typeof p.status !== "string")
      throw new DomainError("validation_error", "The webhook's prediction has no status.");
    if (p.id !== undefined && p.id !== jobId)
      throw new DomainError("validation_error", "The webhook's prediction is not this job's.");
    if (!COG_FINAL_STATUSES.has(p.status)) return "ignored";
    const recorded = await this.d.store.record(jobId, provider, JSON.stringify(body), this.now());
    if (recorded) for (const wake of this.waiters.get(jobId) ?? []) wake();
    return recorded ? "recorded" : "duplicate";
  }

  private async recorded(provider: string, jobId: string): Promise<unknown> {
    const text = await this.d.store.get(jobId, provider);
    return text === null ? null : (JSON.parse(text) as unknown);
  }

  /** Reads the record until there is one: woken by this instance's webhook, else every pollMs. */
  private async wait(provider: string, jobId: string, signal: AbortSignal): Promise<unknown> {
    for (;;) {
      signal.throwIfAborted();
      const got = await this.recorded(provider, jobId);
      if (got !== null) return got;
      await this.pause(jobId, signal);
    }
  }

  private pause(jobId: string, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let set = this.waiters.get(jobId);
      if (!set) {
        set = new Set();
        this.waiters.set(jobId, set);
      }
      const waiters = set;
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", aborted);
        waiters.delete(wake);
        if (waiters.size === 0) this.waiters.delete(jobId);
      };
      const wake = () => {
        done();
        resolve();
      };
      const aborted = () => {
        done();
        reject(signal.reason);
      };
      const timer = setTimeout(wake, this.pollMs);
      waiters.add(wake);
      signal.addEventListener("abort", aborted, { once: true });
    });
  }
}

function signed(provider: string, jobId: string): string {
  return `${provider}\n${jobId}`;
}
