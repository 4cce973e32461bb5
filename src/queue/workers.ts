import type { Catalog } from "../catalog/catalog.ts";
import type { Model } from "../catalog/model.ts";
import { fetchOutputToBlobs } from "../files/fetch-output.ts";
import type { InputReader } from "../files/input-reader.ts";
import type { OutputRow } from "../files/job-output-store.ts";
import type { OutputWriter } from "../files/output-writer.ts";
import { errorFields, log } from "../lib/log.ts";
import { mediaCost } from "../pricing/cost.ts";
import { type DeliveredOutput, priceDelivery } from "../pricing/delivered.ts";
import { parseQuote } from "../pricing/quote.ts";
import { bytesSource, type Measured, measureMedia } from "../providers/measure.ts";
import { firstRoute, nextRoute, withRoute } from "../providers/routes.ts";
import type { MediaOutput, Provider, ProviderCallback, ProviderJob } from "../providers/types.ts";
import { logProviderFailure, ProviderError, ShutdownError } from "../providers/types.ts";
import type { JobEvents } from "./events.ts";
import type { JobLogStore } from "./job-log-store.ts";
import type { JobRow } from "./job-row.ts";
import type { JobStore } from "./job-store.ts";

export interface WorkerPoolOptions {
  jobs: JobStore;
  /** The jobs' log lines (ProviderJob.log, priorLogs, the back-off line). */
  jobLogs: JobLogStore;
  events: JobEvents;
  providers: Map<string, Provider>;
  catalog: () => Catalog;
  outputs: OutputWriter;
  /** Workers per provider. */
  concurrency: (provider: string) => number;
  /** Cap of running jobs per model, or null for none. */
  modelConcurrency: (modelId: string) => number | null;
  outputTtlMs: () => number;
  /** Rewrites a stored input for the provider (file ids -> fresh signed URLs). */
  prepareInput: (input: Record<string, unknown>) => Record<string, unknown>;
  /** Measured pixel size of an account's uploaded file (for ProviderJob.inputImageSize). */
  uploadedImageSize?: (
    fileId: string,
    accountId: string,
  ) => Promise<{ width: number; height: number } | null>;
  /** Reads an input file for a provider (ProviderJob.readInput): src/files/input-reader.ts. */
  readInput: InputReader;
  /** Is a provider's circuit open (a job not yet accepted then goes to its model's next route)? */
  circuitOpen?: (provider: string) => boolean;
  /** The webhook of a job's upstream (ProviderJob.callback: cog), where it answers by webhook. */
  callbacks?: { forJob(provider: string, jobId: string): ProviderCallback };
  leaseMs?: number;
  owner?: string;
}

const LEASE_MS = 30_000;
/** Back-off for capacity errors without a Retry-After: 1 s doubling to 60 s. */
const backoff = (attempt: number) => Math.min(60_000, 1000 * 2 ** Math.min(6, attempt - 1));

/**
 * Runs queued jobs. Per provider one claimer takes as many runnable jobs as it has idle workers, in
 * one claim (each job with its own lease and attempt number), no more of a model than its remaining
 * concurrency, and hands them to the idle workers; each runs its job and moves it to its final
 * state through the JobStore (which settles the money in the same transaction). The claimer is the
 * only one claiming for its provider in this pool and counts the jobs it handed out before its next
 * claim, so a model's cap holds within the pool (it is per instance: docs/queue.md). An idle
 * claimer sleeps until a submit or a finished job wakes it, or a second passes.
 */
export class WorkerPool {
  private running = false;
  private readonly loops: Promise<void>[] = [];
  private readonly active = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private readonly perModel = new Map<string, number>();
  /** Worker slots and running jobs per provider (metrics; the claimers' free slots). */
  private readonly slots = new Map<string, { busy: number; total: number }>();
  private readonly wakers = new Set<() => void>();
  /** Wakes a provider's idle claimer (a job of it finished: a slot, maybe a model's cap, is free). */
  private readonly freed = new Map<string, () => void>();
  readonly owner: string;
  private readonly leaseMs: number;

  constructor(private readonly o: WorkerPoolOptions) {
    this.owner = o.owner ?? `worker-${process.pid}-${Date.now().toString(36)}`;
    this.leaseMs = o.leaseMs ?? LEASE_MS;
  }

  start(): void {
    this.running = true;
    for (const [name] of this.o.providers) {
      this.slots.set(name, { busy: 0, total: Math.max(1, this.o.concurrency(name)) });
      this.loops.push(this.claimer(name));
    }
  }

  /**
   * Stops claiming, lets running jobs finish for up to `graceMs`, then aborts the rest. An aborted
   * job keeps its IN_PROGRESS state and lease, so the next start (or the sweep) recovers it.
   */
  async stop(graceMs: number): Promise<void> {
    this.running = false;
    for (const wake of this.wakers) wake();
    await Promise.all(this.loops);
    const all = Promise.all([...this.active.values()].map((a) => a.done));
    const timedOut = await Promise.race([all.then(() => false), Bun.sleep(graceMs).then(() => true)]);
    if (timedOut)
      for (const a of this.active.values()) a.controller.abort(new ShutdownError("shutting down"));
    await all;
  }

  get activeCount(): number {
    return this.active.size;
  }

  /** Worker slots per provider and how many run a job now. */
  usage(): Iterable<[string, { busy: number; total: number }]> {
    return this.slots.entries();
  }

  /** The remaining concurrency of each capped model of a provider, with the jobs running now. */
  private remainingCaps(provider: string): Map<string, number> {
    const caps = new Map<string, number>();
    const add = (model: string) => {
      const cap = this.o.modelConcurrency(model);
      if (cap !== null) caps.set(model, Math.max(0, cap - (this.perModel.get(model) ?? 0)));
    };
    for (const m of this.o.catalog().models) if (m.routes.some((r) => r.provider === provider)) add(m.id);
    // A running model no longer in the catalog (reloaded): still counted against its cap.
    for (const model of this.perModel.keys()) if (!caps.has(model)) add(model);
    return caps;
  }

  private async claimer(provider: string): Promise<void> {
    const slot = this.slots.get(provider)!;
    while (this.running) {
      const free = slot.total - slot.busy;
      let jobs: JobRow[] = [];
      if (free > 0) {
        try {
          jobs = await this.o.jobs.claimBatch(
            provider,
            free,
            this.remainingCaps(provider),
            this.owner,
            this.leaseMs,
            Date.now(),
          );
        } catch (err) {
          log("error", "claim failed", { provider, ...errorFields(err) });
        }
        // Counted at once (runJob's synchronous start), before the next claim reads the counts.
        for (const job of jobs) void this.runJob(job);
      }
      // A full batch may leave more runnable jobs: claim again at once. Otherwise wait for a
      // submit, a finished job, or the poll (another instance's claim may have skipped a job).
      if (jobs.length < free || free === 0) await this.idle(provider, 1000);
    }
  }

  private idle(provider: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        off();
        this.wakers.delete(done);
        if (this.freed.get(provider) === done) this.freed.delete(provider);
        resolve();
      };
      const timer = setTimeout(done, ms);
      const off = this.o.events.onWork(provider, done);
      this.wakers.add(done);
      this.freed.set(provider, done);
    });
  }

  private async runJob(job: JobRow): Promise<void> {
    const controller = new AbortController();
    let finish!: () => void;
    const done = new Promise<void>((r) => {
      finish = r;
    });
    this.active.set(job.id, { controller, done });
    this.perModel.set(job.model_id, (this.perModel.get(job.model_id) ?? 0) + 1);
    const slot = this.slots.get(job.provider);
    if (slot) slot.busy++;
    const renew = setInterval(
      () =>
        void this.o.jobs
          .renewLease(job.id, this.owner, Date.now() + this.leaseMs)
          .catch((err) => log("warn", "lease renewal failed", { request_id: job.id, ...errorFields(err) })),
      this.leaseMs / 3,
    );
    const untilDeadline = Number(job.deadline_at) - Date.now();
    const deadline = setTimeout(() => controller.abort(new DeadlineError()), Math.max(0, untilDeadline));
    try {
      await this.execute(job, controller.signal);
    } catch (err) {
      log("error", "job crashed", { request_id: job.id, ...errorFields(err) });
      try {
        await this.o.jobs
          .fenced(this.owner, job.attempt)
          .fail(job.id, "generation_failed", "The job failed unexpectedly.", Date.now());
      } catch (failErr) {
        // Left IN_PROGRESS: its lease lapses and recovery resumes or fails it.
        log("error", "failing a crashed job failed", { request_id: job.id, ...errorFields(failErr) });
      }
    } finally {
      clearInterval(renew);
      clearTimeout(deadline);
      // Releases what the providers derived from the job's signal: a timeout signal another signal
      // depends on (AbortSignal.any with AbortSignal.timeout, as upstream fetches use) otherwise
      // stays alive until it fires (src/chat/service.ts endCall; docs/performance.md).
      if (!controller.signal.aborted) controller.abort(new JobEndedError());
      this.active.delete(job.id);
      this.perModel.set(job.model_id, (this.perModel.get(job.model_id) ?? 1) - 1);
      if (slot) slot.busy--;
      this.freed.get(job.provider)?.();
      finish();
    }
  }

  private async execute(job: JobRow, signal: AbortSignal): Promise<void> {
    // Every write of this attempt is fenced by its lease (owner and attempt).
    const jobs = this.o.jobs.fenced(this.owner, job.attempt);
    const logs = this.o.jobLogs.fenced(this.owner, job.attempt);
    const provider = this.o.providers.get(job.provider);
    const entry = this.o.catalog().get(job.model_id);
    const route = entry ? routeOf(entry, job) : -1;
    if (!provider || !entry || route < 0) {
      await jobs.fail(job.id, "generation_failed", `Model ${job.model_id} is no longer served.`, Date.now());
      return;
    }
    // The adapter sees the model on the job's route: that route's upstream model and input map.
    const model = withRoute(entry, route);
    // Accepted: an upstream holds the job (its id recorded, now or in an earlier attempt). From then
    // on the job stays on this route, resumed, never moved (docs/providers.md "Fallback").
    let accepted = job.upstream_id !== null;
    if (!accepted && entry.routes.length > 1 && this.o.circuitOpen?.(job.provider)) {
      const refused = new ProviderError("capacity", "The upstream is unavailable.", { notAccepted: true });
      if (await this.fallback(job, entry, route, refused)) return;
    }
    const stored = JSON.parse(job.input) as Record<string, unknown>;
    let logged: Promise<unknown> = Promise.resolve();
    const pj: ProviderJob = {
      id: job.id,
      model,
      input: this.o.prepareInput(stored),
      attempt: Number(job.attempt),
      upstreamId: job.upstream_id,
      signal,
      deadlineAt: Number(job.deadline_at),
      priorLogs: async () => (await logs.list(job.id)).map((l) => l.message),
      // In order, in the background: a provider logs without waiting, and a failed write is not its failure.
      log: (message) => {
        const at = Date.now();
        logged = logged
          .then(async () => await logs.append(job.id, "info", message, at))
          .catch((err) => log("warn", "job log write failed", { job_id: job.id, ...errorFields(err) }));
      },
      setUpstreamId: async (id) => {
        accepted = true;
        await jobs.setUpstreamId(job.id, id);
      },
      ...(this.o.callbacks ? { callback: this.o.callbacks.forJob(job.provider, job.id) } : {}),
      readInput: (value, o) => this.o.readInput(value, job.account_id, { ...o, signal, requestId: job.id }),
      inputImageSize: async (field) => {
        const value = stored[field];
        return typeof value === "string" && this.o.uploadedImageSize
          ? await this.o.uploadedImageSize(value, job.account_id)
          : null;
      },
    };
    let result: Awaited<ReturnType<Provider["run"]>>;
    try {
      result = await provider.run(pj);
      await logged;
    } catch (err) {
      await logged;
      if (signal.aborted && signal.reason instanceof DeadlineError) {
        await jobs.fail(
          job.id,
          "generation_failed",
          `The job exceeded the model's time limit of ${model.time_limit_seconds} s.`,
          Date.now(),
        );
      } else if (signal.aborted) {
        // Shutdown: leave the job IN_PROGRESS; its lease lapses and recovery resumes it.
      } else if (
        err instanceof ProviderError &&
        err.notAccepted &&
        !accepted &&
        entry.routes.length > 1 &&
        (await this.fallback(job, entry, route, err))
      ) {
        // Moved to its next route (or back to its first, after a back-off).
      } else if (err instanceof ProviderError && err.kind === "capacity") {
        const wait = err.retryAfterMs ?? backoff(Number(job.attempt));
        await logs.append(
          job.id,
          "warn",
          `upstream busy: retrying in ${Math.ceil(wait / 1000)} s`,
          Date.now(),
        );
        await jobs.requeue(job.id, Date.now() + wait);
      } else {
        // The client sees our message only; what the upstream said goes to the operator's log.
        if (err instanceof ProviderError) logProviderFailure(err, job.id, job.provider);
        else log("error", "provider error", { request_id: job.id, ...errorFields(err) });
        const message = err instanceof ProviderError ? err.message : "The provider failed.";
        await jobs.fail(job.id, "generation_failed", message, Date.now());
      }
      return;
    }
    if (result.outputs.length === 0) {
      // Nothing delivered is a failed generation: the hold is released, nothing charged.
      await jobs.fail(job.id, "generation_failed", "The provider finished without any output.", Date.now());
      return;
    }
    // Outputs are in the store before the job is COMPLETED, so a completed job always has its media.
    const rows: OutputRow[] = [];
    try {
      for (const [idx, o] of result.outputs.entries()) {
        if (o.bytes) rows.push(await this.o.outputs.write(job.id, idx, o.bytes, o.contentType));
        else if (o.url) {
          const copy = await fetchOutputToBlobs(
            o.url,
            this.o.outputs.blobs,
            job.id,
            idx,
            o.contentType,
            signal,
          );
          // The provider's declared type wins when the upstream's link serves a generic one.
          rows.push(
            copy.contentType === "application/octet-stream" ? { ...copy, contentType: o.contentType } : copy,
          );
        } else throw new Error("an output without bytes or url");
      }
    } catch (err) {
      if (signal.aborted && !(signal.reason instanceof DeadlineError)) return; // shutdown: recoverable
      log("error", "storing outputs failed", { request_id: job.id, ...errorFields(err) });
      if (err instanceof ProviderError) logProviderFailure(err, job.id, job.provider);
      await this.removeOutputs(job.id);
      const why = err instanceof ProviderError ? err.message : "The outputs could not be stored.";
      await jobs.fail(job.id, "generation_failed", why, Date.now());
      return;
    }
    // The charge is the price of what was delivered, measured from the stored files (docs/money.md,
    // "Charge equals delivery"), never above the hold.
    const delivered = result.outputs.map((o, i) => deliveredOutput(o, this.measure(o, rows[i]!)));
    const quote = parseQuote(job.quote);
    const delivery = priceDelivery(quote, delivered, result.actualUnits);
    const output = outputTemplate(
      job.kind,
      result.outputs.map((o, i) => withMeasured(o, delivered[i]!)),
      result.extra,
    );
    // The route's cost of the same delivered quantity the charge used, written by the same UPDATE
    // that completes the job, in the charge's transaction (docs/money.md "Cost").
    const completed = await jobs.complete(
      job.id,
      output,
      rows,
      delivery.amount_usd_micro,
      delivery.units,
      this.o.outputTtlMs(),
      Date.now(),
      mediaCost(entry.routes[route], delivery.quantity, quote.quantity_per_unit),
    );
    if (!completed) await this.removeOutputs(job.id); // failed meanwhile (deadline sweep): no orphans
  }

  /**
   * A job its route refused before accepting it (`err.notAccepted`, or the route's circuit open):
   * to the next route at once while some route has not refused it in this walk; after every route
   * refused, a capacity refusal backs off on the walk's first route (false for any other refusal:
   * the caller fails the job). Only while no upstream id is recorded (JobStore.requeue's guard).
   */
  private async fallback(job: JobRow, model: Model, route: number, err: ProviderError): Promise<boolean> {
    const jobs = this.o.jobs.fenced(this.owner, job.attempt);
    const tries = Number(job.route_tries) + 1;
    const from = model.routes[route]!.provider;
    const n = model.routes.length;
    if (tries < n) {
      const next = nextRoute(model, route);
      const to = model.routes[next]!.provider;
      // The operator's log names both routes; the job's own log (shown to its client) names none.
      log("warn", "route refused the job before accepting it; next route", {
        request_id: job.id,
        model: model.id,
        from,
        to,
        status: err.status ?? null,
      });
      await this.o.jobLogs
        .fenced(this.owner, job.attempt)
        .append(job.id, "warn", "upstream unavailable: trying another upstream", Date.now());
      return await jobs.requeue(job.id, Date.now(), { provider: to, route: next, tries });
    }
    if (err.kind !== "capacity") return false;
    const first = firstRoute(model, route, Number(job.route_tries));
    const wait = err.retryAfterMs ?? backoff(Number(job.attempt));
    log("warn", "every route refused the job; backing off", { request_id: job.id, model: model.id });
    await this.o.jobLogs
      .fenced(this.owner, job.attempt)
      .append(job.id, "warn", `upstream busy: retrying in ${Math.ceil(wait / 1000)} s`, Date.now());
    return await jobs.requeue(job.id, Date.now() + wait, {
      provider: model.routes[first]!.provider,
      route: first,
      tries: 0,
    });
  }

  /** Removes a job's stored outputs; a store that cannot be reached leaves them (logged). */
  private async removeOutputs(jobId: string): Promise<void> {
    try {
      await this.o.outputs.removeJob(jobId);
    } catch (err) {
      log("warn", "outputs not removed", { request_id: jobId, ...errorFields(err) });
    }
  }

  /** Measures a delivered file: the bytes in hand, else as measured before it was stored. */
  private measure(o: MediaOutput, row: OutputRow) {
    return o.bytes ? measureMedia(bytesSource(o.bytes)) : row.measured!;
  }
}

/**
 * The index of a job's route in its model's routes: the recorded one while it is still on the
 * job's provider, else (routes reordered by a reload) the first route on that provider; -1 if none.
 */
function routeOf(model: Model, job: JobRow): number {
  const recorded = Number(job.route);
  if (model.routes[recorded]?.provider === job.provider) return recorded;
  return model.routes.findIndex((r) => r.provider === job.provider);
}

/**
 * One output as the settlement sees it: measured values first, the provider's declaration for what
 * the file does not tell (an unknown container), nothing assumed here (priceDelivery decides).
 */
export function deliveredOutput(o: MediaOutput, m: Measured): DeliveredOutput {
  const sized = m.width !== null && m.height !== null;
  return {
    width: sized ? m.width : (o.width ?? null),
    height: sized ? m.height : (o.height ?? null),
    duration: m.duration ?? (m.still ? null : (o.duration ?? null)),
    still: m.still,
  };
}

/** The output's description with the measured size and duration in place of the declared ones. */
function withMeasured(o: MediaOutput, d: DeliveredOutput): MediaOutput {
  const out: MediaOutput = { ...o };
  if (d.width !== null && d.height !== null) {
    out.width = d.width;
    out.height = d.height;
  }
  if (d.duration !== null && o.kind !== "image") out.duration = d.duration;
  return out;
}

class DeadlineError extends Error {}

/** The reason a finished job's signal is aborted with (nothing reads it then). */
class JobEndedError extends Error {}

/** The model output in fal's shapes, media replaced by {"$output": index} until read. */
export function outputTemplate(
  kind: string,
  outputs: MediaOutput[],
  extra?: Record<string, unknown>,
): Record<string, unknown> {
  const media = outputs.map((o, i) => ({
    url: { $output: i },
    content_type: o.contentType,
    ...(o.width !== undefined ? { width: o.width } : {}),
    ...(o.height !== undefined ? { height: o.height } : {}),
    ...(o.duration !== undefined ? { duration: o.duration } : {}),
  }));
  if (kind === "image" || kind === "upscale") return { images: media, ...extra };
  if (kind === "audio") return { audio: media[0] ?? null, ...extra };
  return { video: media[0] ?? null, ...extra };
}
