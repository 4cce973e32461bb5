import type { LiveSettings } from "../config/schema.ts";
import { type Bus, LocalBus, publishAfterCommit } from "../db/bus.ts";
import { GroupCommit } from "../db/group-commit.ts";
import { afterCommit, type Sql } from "../db/sql.ts";
import type { BlobBackend } from "../files/blob-backend.ts";
import { LocalBlobBackend } from "../files/blob-backend-local.ts";
import { inputReader } from "../files/input-reader.ts";
import { JobOutputStore } from "../files/job-output-store.ts";
import { OutputWriter } from "../files/output-writer.ts";
import { LINK_TTL_SECONDS, LinkSigner } from "../files/signing.ts";
import { FileStore } from "../files/store.ts";
import { IdempotencyStore } from "../idempotency/idempotency.ts";
import type { HoldRow, Ledger } from "../ledger/ledger.ts";
import { writeRateLimiter } from "../limits/rate-limit.ts";
import { Metrics } from "../metrics/metrics.ts";
import { UpstreamCallbackStore } from "../providers/callback-store.ts";
import type { CircuitBreaker } from "../providers/circuit.ts";
import { CogWebhooks } from "../providers/cog/webhooks.ts";
import { fillProviders } from "../providers/registry.ts";
import type { Provider } from "../providers/types.ts";
import { JobEvents } from "../queue/events.ts";
import { JobLogStore } from "../queue/job-log-store.ts";
import { JobRetentionStore } from "../queue/job-retention-store.ts";
import type { JobRow } from "../queue/job-row.ts";
import { JobStatsStore } from "../queue/job-stats-store.ts";
import { JobStore } from "../queue/job-store.ts";
import {
  listItemView,
  queuedRequestView,
  recordView,
  renderOutput,
  statusView,
  type ViewContext,
} from "../queue/views.ts";
import type { QueueServices } from "../server/context.ts";
import { WEBHOOKS_CHANNEL } from "../webhooks/dispatcher.ts";
import { WebhookOutbox } from "../webhooks/outbox.ts";
import { WebhookSecretStore } from "../webhooks/secret-store.ts";
import { checkWebhookUrl, type WebhookPolicy } from "../webhooks/url-policy.ts";

export interface QueueOptions {
  /** The public address; `baseUrl` is it plus "/v1". */
  publicUrl: string;
  baseUrl: string;
  filesRoot: string;
  /** Where stored bytes live (src/files/blob-backend.ts); default: the local directory filesRoot. */
  blobs?: BlobBackend;
  /** Output link signing secrets; the first signs, all verify. */
  linkSecrets: string[];
  webhookPolicy: () => WebhookPolicy;
  /** The settings at start: which providers to create. */
  live: LiveSettings;
  /** Hints to every instance (jobs.changed, jobs.work, webhooks); default in process. */
  bus?: Bus;
}

/** The queue's collaborators over one database: jobs, events, outputs, links, idempotency, webhooks. */
export function createQueueServices(sql: Sql, services: { ledger: Ledger }, o: QueueOptions): QueueServices {
  const bus = o.bus ?? new LocalBus();
  const events = new JobEvents(bus);
  const outbox = new WebhookOutbox(sql, {});
  const webhookSecrets = new WebhookSecretStore(sql);
  // Inside the final-state transaction: a delivery exists exactly when the final state committed.
  // The wake-up goes to every instance's dispatcher (bus channel "webhooks") once that commits; a
  // dispatcher not started yet, or a lost hint, is covered by the dispatchers' own timers.
  const webhookWaker = { wake: () => publishAfterCommit(bus, WEBHOOKS_CHANNEL) };
  const enqueueWebhook = async (tx: Sql, job: JobRow) => {
    if (job.webhook_url) {
      await outbox.in(tx).enqueue({
        requestId: job.id,
        accountId: job.account_id,
        url: job.webhook_url,
        event: job.status as "COMPLETED",
      });
      webhookWaker.wake();
    }
  };
  // Counted when the final-state transaction commits (its commit is the event), in the same run of
  // after-commit calls as the charge's count: a scrape never sees a job finished and not yet charged.
  const metrics = new Metrics();
  const countFinal = (_tx: Sql, job: JobRow) =>
    afterCommit(() => metrics.jobsFinished.inc([job.model_id, job.status], 1));
  services.ledger.onCharge = (currency, modelId, micro) =>
    metrics.charged.inc([currency, modelId ?? ""], micro);
  const jobOutputs = new JobOutputStore(sql);
  const jobLogs = new JobLogStore(sql);
  const jobs = new JobStore(sql, {
    ledger: services.ledger,
    outputs: jobOutputs,
    events,
    finalHooks: [enqueueWebhook, countFinal],
    onCompleted: (job, charge) => metrics.countCompleted(job, charge),
  });
  const blobs = o.blobs ?? new LocalBlobBackend(o.filesRoot);
  const outputs = new OutputWriter(blobs);
  const files = new FileStore(sql, blobs, jobOutputs);
  const signer = new LinkSigner(o.linkSecrets);

  const viewCtx: ViewContext = {
    baseUrl: o.baseUrl,
    queuePosition: (job) => jobs.queuePosition(job),
    logs: async (id) => await jobLogs.list(id),
    hold: async (id) => await services.ledger.getHold(id),
    webhook: async (job) => {
      if (!job.webhook_url) return null;
      const d = await outbox.deliveryFor(job.id);
      return { url: job.webhook_url, status: d?.status ?? "not_sent", attempts: d?.attempts ?? 0 };
    },
    outputUrls: async (job) => {
      // Reissued at every read: each link is valid for 24 hours from the read.
      const exp = Math.floor(Date.now() / 1000) + LINK_TTL_SECONDS;
      return (await jobOutputs.indexes(job.id)).map(
        (i) => `${o.baseUrl}/requests/${job.id}/output/${i}?exp=${exp}&sig=${signer.sign(job.id, i, exp)}`,
      );
    },
  };
  const views = {
    /**
     * `tx`: rendered inside the transaction that opened the job (its stored Idempotency answer).
     * `hold`: the job's hold as the reservation returned it, so a submit's 202 does not read it
     * again (7 us of every submit).
     */
    queued: async (job: JobRow, at: { tx?: Sql; hold?: HoldRow | null } = {}) => {
      const { tx, hold } = at;
      if (hold && hold.id === job.hold_id)
        return await queuedRequestView(job, { ...viewCtx, hold: async () => hold });
      if (tx)
        return await queuedRequestView(job, {
          ...viewCtx,
          hold: async (id) => await services.ledger.in(tx).getHold(id),
        });
      return await queuedRequestView(job, viewCtx);
    },
    status: async (job: JobRow, withLogs: boolean) => await statusView(job, viewCtx, withLogs),
    record: async (job: JobRow) => await recordView(job, viewCtx),
    listItem: async (job: JobRow) => await listItemView(job, viewCtx),
    output: async (job: JobRow) => await renderOutput(job, viewCtx),
  };
  const providers = new Map<string, Provider>();
  const circuits = new Map<string, CircuitBreaker>();
  fillProviders(providers, o.live, circuits);
  const callbacks = new UpstreamCallbackStore(sql);

  return {
    metrics,
    events,
    jobs,
    jobOutputs,
    jobLogs,
    jobStats: new JobStatsStore(sql),
    blobs,
    outputs,
    files,
    signer,
    views,
    providers,
    circuits,
    outbox,
    webhookSecrets,
    webhookWaker,
    idempotency: new IdempotencyStore(sql),
    submits: new GroupCommit(sql),
    rateLimiter: writeRateLimiter(sql),
    checkWebhookUrl: (raw: string) => checkWebhookUrl(raw, o.webhookPolicy()),
    /** How a provider reads an input file (ProviderJob.readInput, src/files/input-reader.ts). */
    readInput: inputReader({ publicUrl: o.publicUrl, signer, files, blobs, policy: o.webhookPolicy }),
    cogWebhooks: new CogWebhooks({
      store: callbacks,
      signer,
      publicUrl: () => o.publicUrl,
    }),
    jobRetention: new JobRetentionStore(sql, { logs: jobLogs, outbox, callbacks }),
  };
}
