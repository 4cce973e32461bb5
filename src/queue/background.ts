import { Cron } from "croner";
import { fileImageSize, replaceFileRefs, signedFileUrl } from "../files/references.ts";
import { errorFields, log } from "../lib/log.ts";
import { MailSender } from "../mail/sender.ts";
import type { AppContext } from "../server/context.ts";
import { WebhookDispatcher } from "../webhooks/dispatcher.ts";
import { recoverJobs } from "./recovery.ts";
import { WorkerPool } from "./workers.ts";

/**
 * Everything that runs besides HTTP: the worker pool, crash recovery (once at start, then a sweep
 * every 10 s for lapsed leases and time limits), the idempotency purge, the retention sweep of
 * uploads and outputs (every 5 minutes), webhook delivery and the expiry of unpaid payment orders
 * (every minute).
 */
export async function startBackground(ctx: AppContext) {
  await recoverJobs(ctx.jobs, ctx.providers, Date.now(), true);
  const pool = new WorkerPool({
    jobs: ctx.jobs,
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
  });
  pool.start();
  const dispatcher = new WebhookDispatcher({
    outbox: ctx.outbox,
    secrets: ctx.webhookSecrets,
    renderRecord: async (id) => {
      const job = await ctx.jobs.get(id);
      return job ? await ctx.views.record(job) : null;
    },
    policy: () => ctx.live.webhooks,
    onOutcome: (outcome) => ctx.metrics.webhookAttempts.inc([outcome], 1),
  });
  await dispatcher.start();
  ctx.metrics.workerUsage = () => pool.usage();
  ctx.webhookWaker.wake = () => dispatcher.wake();
  ctx.alerts.wakeWebhooks = () => dispatcher.wake();
  // Mail ([smtp]): runs always, idles while none is configured (a reload may add it).
  const mail = new MailSender({ outbox: ctx.mailer.outbox, settings: () => ctx.live.smtp });
  await mail.start();
  ctx.mailer.wake = () => mail.wake();
  const guard = (name: string, fn: () => unknown) => async () => {
    try {
      await fn(); // protect: croner starts no second run while a (batched, async) one is going
    } catch (err) {
      log("error", `${name} failed`, errorFields(err));
    }
  };
  const jobs = [
    new Cron(
      "*/10 * * * * *",
      { name: "queue-sweep", protect: true, timezone: "UTC" },
      guard("queue sweep", async () => await recoverJobs(ctx.jobs, ctx.providers, Date.now(), false)),
    ),
    new Cron(
      "17 * * * *",
      { name: "idempotency-purge", protect: true, timezone: "UTC" },
      guard("idempotency purge", async () => await ctx.idempotency.purgeExpired()),
    ),
    new Cron(
      "*/5 * * * *",
      { name: "retention-sweep", protect: true, timezone: "UTC" },
      guard("retention sweep", async () => {
        const gone = await ctx.files.sweep();
        if (gone.files || gone.outputs) log("info", "retention sweep", gone);
      }),
    ),
    new Cron(
      "30 * * * * *",
      { name: "order-expiry", protect: true, timezone: "UTC" },
      guard("order expiry", async () => {
        const expired = await ctx.payments.expireDue();
        if (expired) log("info", "payment orders expired", { expired });
      }),
    ),
  ];
  return {
    pool,
    dispatcher,
    mail,
    /** Running jobs get `graceMs` to finish; the rest stay IN_PROGRESS and are resumed at next start. */
    async stop(graceMs: number) {
      for (const j of jobs) j.stop();
      await pool.stop(graceMs);
      await Promise.all([dispatcher.stop(), mail.stop()]);
    },
  };
}
