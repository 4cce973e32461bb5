import { createHash } from "node:crypto";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { Cron } from "croner";
import { fileImageSize, replaceFileRefs, signedFileUrl } from "../files/references.ts";
import { UTC_NO_OVERLAP } from "../lib/cron.ts";
import { errorFields, log } from "../lib/log.ts";
import { MAIL_CHANNEL, MailSender } from "../mail/sender.ts";
import { recoverJobs } from "../queue/recovery.ts";
import { WorkerPool } from "../queue/workers.ts";
import { predictionView } from "../replicate/prediction-view.ts";
import type { AppContext } from "../server/context.ts";
import { WEBHOOKS_CHANNEL, WebhookDispatcher } from "../webhooks/dispatcher.ts";

/**
 * Everything that runs besides HTTP: the worker pool, crash recovery (once at start, then a sweep
 * every 10 s for lapsed leases and time limits), the idempotency purge, the retention sweep of
 * uploads and outputs (every 5 minutes), the request retention (hourly), webhook delivery and the
 * expiry of unpaid payment orders (every minute). Workers, the webhook dispatcher and the mail
 * sender run on every instance; each sweep (SWEEPS) on one instance at a time, the leader of its name.
 */
export async function startBackground(ctx: AppContext) {
  // SQLite: one instance, so every running job was this process's before it stopped. PostgreSQL:
  // other live instances run theirs, so only lapsed leases are taken (the queue sweep's rule), and
  // those of this instance's earlier life (same host and data dir: a restart after a crash).
  const name = instanceName(ctx.settings.dataDir);
  const ownLeases = name === null ? undefined : `worker@${name}/`;
  const life = `${process.pid}-${Date.now().toString(36)}`;
  await recoverJobs(
    ctx,
    ctx.providers,
    Date.now(),
    ctx.sql.dialect === "sqlite",
    undefined,
    name === null ? [] : [`worker@${name}/`, `request@${name}/`],
  );
  if (name !== null) ctx.jobs.requestOwner = `request@${name}/${life}`;
  const pool = new WorkerPool({
    ...(ownLeases ? { owner: `${ownLeases}${life}` } : {}),
    jobs: ctx.jobs,
    jobLogs: ctx.jobLogs,
    events: ctx.events,
    providers: ctx.providers,
    catalog: () => ctx.catalog,
    outputs: ctx.outputs,
    concurrency: (p) => ctx.live.queue.concurrency[p] ?? ctx.live.providers[p]?.concurrency ?? 4,
    modelConcurrency: (m) => ctx.catalog.get(m)?.concurrency ?? null,
    outputTtlMs: () => ctx.live.files.retentionMs,
    prepareInput: (input) =>
      replaceFileRefs(input, (id) => signedFileUrl(ctx, id)) as Record<string, unknown>,
    uploadedImageSize: async (id, accountId) => fileImageSize(await ctx.files.getLive(id, accountId)),
    readInput: ctx.readInput,
    circuitOpen: (p) => ctx.circuits.get(p)?.isOpen() ?? false,
    callbacks: ctx.cogWebhooks,
  });
  pool.start();
  const dispatcher = new WebhookDispatcher({
    outbox: ctx.outbox,
    secrets: ctx.webhookSecrets,
    renderRecord: async (id) => {
      const job = await ctx.jobs.get(id);
      if (!job) return null;
      // A Replicate create's webhook gets the prediction, as Replicate sends it (docs/clients.md).
      return job.webhook_body === "prediction" ? await predictionView(ctx, job) : await ctx.views.record(job);
    },
    policy: () => ctx.live.webhooks,
    onOutcome: (outcome) => ctx.metrics.webhookAttempts.inc([outcome], 1),
  });
  await dispatcher.start();
  ctx.metrics.workerUsage = () => pool.usage();
  // Mail ([smtp]): runs always, idles while none is configured (a reload may add it).
  const mail = new MailSender({ outbox: ctx.mailer.outbox, settings: () => ctx.live.smtp });
  await mail.start();
  // Wake-ups from any instance (ctx.webhookWaker, alerts, the mailer publish after their commit);
  // the loops' own timers are the poll behind these hints.
  const wakeDispatcher = () => dispatcher.wake();
  const wakeMail = () => mail.wake();
  const unsubscribe = [
    ctx.bus.subscribe(WEBHOOKS_CHANNEL, wakeDispatcher, { onMaybeMissed: wakeDispatcher }),
    ctx.bus.subscribe(MAIL_CHANNEL, wakeMail, { onMaybeMissed: wakeMail }),
  ];
  const jobs = SWEEPS.map(
    (sweep) =>
      // Unnamed: croner names are process-wide, and tests run several instances in one process.
      new Cron(sweep.cron, UTC_NO_OVERLAP, async () => {
        await runSweep(ctx, sweep);
      }),
  );
  return {
    pool,
    dispatcher,
    mail,
    /** Running jobs get `graceMs` to finish; the rest stay IN_PROGRESS and are resumed at next start. */
    async stop(graceMs: number) {
      for (const j of jobs) j.stop();
      for (const off of unsubscribe) off();
      await pool.stop(graceMs);
      await Promise.all([dispatcher.stop(), mail.stop()]);
    },
  };
}

/** A periodic sweep: run by one instance at a time (ctx.leadership), under its name. */
export interface Sweep {
  name: string;
  /** croner pattern, UTC. */
  cron: string;
  /** The work; loops over batches stop when `signal` aborts (the leadership was lost). */
  run(ctx: AppContext, signal: AbortSignal): Promise<unknown>;
}

export const SWEEPS: readonly Sweep[] = [
  {
    name: "queue-sweep",
    cron: "*/10 * * * * *",
    run: async (ctx, signal) => await recoverJobs(ctx, ctx.providers, Date.now(), false, signal),
  },
  {
    name: "idempotency-purge",
    cron: "17 * * * *",
    run: async (ctx, signal) => await ctx.idempotency.purgeExpired(signal),
  },
  {
    name: "retention-sweep",
    cron: "*/5 * * * *",
    run: async (ctx, signal) => {
      const gone = await ctx.files.sweep(Date.now(), signal);
      if (gone.files || gone.outputs) log("info", "retention sweep", gone);
    },
  },
  {
    // [retention] requests_days: finished requests' records (never money), in batches of 500.
    name: "request-retention",
    cron: "41 * * * *",
    run: async (ctx, signal) => await purgeOldRequests(ctx, Date.now(), signal),
  },
  {
    // [retention] ledger_days (off by default): money history, in batches of 500.
    name: "ledger-retention",
    cron: "47 * * * *",
    run: async (ctx, signal) => await purgeOldLedger(ctx, Date.now(), signal),
  },
  {
    name: "order-expiry",
    cron: "30 * * * * *",
    run: async (ctx) => {
      const expired = await ctx.payments.expireDue();
      if (expired) log("info", "payment orders expired", { expired });
    },
  },
];

/**
 * Deletes the records of requests that ended more than [retention] requests_days ago (read at each
 * run, so a reload applies); nothing when they are kept forever. Returns how many went.
 */
export async function purgeOldRequests(
  ctx: Pick<AppContext, "live" | "jobRetention">,
  now: number,
  signal?: AbortSignal,
): Promise<number> {
  const keep = ctx.live.retention.requestsMs;
  if (keep === null) return 0;
  const purged = await ctx.jobRetention.purgeFinished(now - keep, signal);
  if (purged) log("info", "request retention", { purged });
  return purged;
}

/**
 * Deletes the money history dated more than [retention] ledger_days ago (read at each run); nothing
 * when it is kept forever (the default). Returns what went.
 */
export async function purgeOldLedger(
  ctx: Pick<AppContext, "live" | "ledgerRetention">,
  now: number,
  signal?: AbortSignal,
): Promise<{ entries: number; holds: number }> {
  const keep = ctx.live.retention.ledgerMs;
  if (keep === null) return { entries: 0, holds: 0 };
  const purged = await ctx.ledgerRetention.purge(Math.floor((now - keep) / 1000), signal);
  if (purged.entries || purged.holds) log("info", "ledger retention", { ...purged });
  return purged;
}

/**
 * One run of a sweep on the instance that leads its name (docs/scale-out.md "Leadership"); the
 * others skip it. True when it ran here. Never throws: a failure is logged, the next run retries.
 */
export async function runSweep(ctx: AppContext, sweep: Sweep): Promise<boolean> {
  try {
    // croner's protect starts no second run while a (batched, async) one is going.
    return await ctx.leadership.run(sweep.name, (signal) => sweep.run(ctx, signal));
  } catch (err) {
    log("error", `${sweep.name} failed`, errorFields(err));
    return false;
  }
}

/**
 * This instance's name in its workers' lease owners: the host and a digest of the data dir, the
 * same after a restart, different for another data dir or host. Null for an in-memory app (tests).
 * A name that changes across restarts (a new container host name) only means the earlier life's
 * jobs wait for their leases to lapse.
 */
export function instanceName(dataDir: string): string | null {
  if (dataDir === ":memory:") return null;
  const digest = createHash("sha256").update(resolve(dataDir)).digest("hex").slice(0, 12);
  return `${hostname()}:${digest}`;
}
