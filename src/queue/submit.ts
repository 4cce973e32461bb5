import type { Principal } from "../accounts/accounts.ts";
import type { Model } from "../catalog/model.ts";
import { validateModelInput } from "../catalog/validate-input.ts";
import { DURABLE_NOW, type Sql } from "../db/sql.ts";
import { ownFileUrlsToIds, resolveFileRefs, uploadedImageSize } from "../files/references.ts";
import type { IdempotencyClaim, Once, StoredResponse } from "../idempotency/idempotency.ts";
import type { HoldRow } from "../ledger/ledger.ts";
import { DomainError } from "../lib/errors.ts";
import { priceMediaInput } from "../pricing/media.ts";
import { type Quote, serializeQuote } from "../pricing/quote.ts";
import { circuitFor } from "../providers/registry.ts";
import type { AppContext } from "../server/context.ts";
import { JOB_POLL_MS } from "./events.ts";
import { FINAL_STATUSES, type JobRow } from "./job-row.ts";

/**
 * Who opens a job: an API key (`source` "API", `apiOpener`) or a person signed in to the studio
 * (`source` "STUDIO", `studioOpener`), who has no key: `keyId` is null and `personId` set, and the
 * in-flight cap counts the person's open jobs (people.open_jobs) instead of the key's.
 */
export interface Opener {
  accountId: string;
  /** The key that opens it: its in-flight cap, monthly spend limit and idempotency scope. */
  keyId: string | null;
  /** The studio's person (keyless openers): their in-flight cap; null for API keys. */
  personId: string | null;
  source: "API" | "STUDIO";
  /** Open (IN_QUEUE or IN_PROGRESS) jobs allowed at once (per key, or per person when keyless). */
  maxInFlight: number;
}

/** An API key as an opener: its own in-flight cap, or the server's default. */
export function apiOpener(ctx: Pick<AppContext, "live">, p: Principal): Opener {
  return {
    accountId: p.accountId,
    keyId: p.keyId,
    personId: null,
    source: "API",
    maxInFlight: p.maxInFlight ?? ctx.live.limits.inFlight,
  };
}

/**
 * A person signed in to the studio as an opener: no key (no key limit, no idempotency scope), the
 * account the session is looking at, and the per-person cap `[studio] in_flight_per_person`.
 */
export function studioOpener(
  ctx: Pick<AppContext, "live">,
  session: { accountId: string; personId: string },
): Opener {
  return {
    accountId: session.accountId,
    keyId: null,
    personId: session.personId,
    source: "STUDIO",
    maxInFlight: ctx.live.studio.inFlightPerPerson,
  };
}

/** What a job is opened with: the caller has resolved the model, validated and priced the input. */
export interface NewJobRequest {
  who: Opener;
  model: Model;
  /** The input as stored with the job (JSON text). */
  input: string;
  quote: Quote;
  webhookUrl: string | null;
  /**
   * A short operation's Idempotency-Key (a queue submit): looked up and stored in the job's own
   * transaction, `answer` making the stored answer of the new job. Long operations (/run, chat)
   * claim their key around the whole call instead (IdempotencyStore.claimRunning) and pass null.
   */
  idempotency: IdempotencyClaim | null;
  answer?: (ctx: AppContext, job: JobRow, tx: Sql) => StoredResponse | Promise<StoredResponse>;
  /**
   * Resolve at the reservation's COMMIT, before it is durable (GroupCommit.runCommitted): a chat
   * starts its upstream call while the WAL sync runs. The caller must await the returned `durable`
   * before it answers anything (docs/decisions.md "Durable commits"). Not with an Idempotency-Key.
   */
  early?: boolean;
}

/**
 * Resolves the model a job is opened for, with the checks of the route that opens it: the queue
 * takes media models (an unknown id is 400 unknown_model, a text model 400 use_chat_completions),
 * chat takes text models (anything else is 400 unknown_model). An open circuit of the model's
 * upstream is 503 before anything is validated deeper or reserved.
 */
export function resolveModel(ctx: AppContext, modelId: string, route: "queue" | "chat"): Model {
  const model = ctx.catalog.get(modelId);
  if (route === "chat") {
    if (model?.kind !== "text") {
      throw new DomainError(
        "unknown_model",
        `"${modelId}" is not a text model of the catalog; see GET /v1/models.`,
        { param: "model" },
      );
    }
  } else if (!model) {
    throw new DomainError("unknown_model", `Model "${modelId}" is not in the catalog; see GET /v1/models.`, {
      param: "model_id",
    });
  } else if (model.kind === "text") {
    throw new DomainError(
      "use_chat_completions",
      `${modelId} is a text model: call POST /v1/chat/completions.`,
      { param: "model_id" },
    );
  }
  if (model.provider !== "sandbox") circuitFor(ctx.circuits, model.provider).check();
  return model;
}

/**
 * A job opened (or an Idempotency-Key's replay): with `durable` (see NewJobRequest.early) and the
 * new job's hold as the reservation wrote it (null on a replay).
 */
export type OpenedJob = Once<JobRow> & { durable: Promise<void>; hold: HoldRow | null };

/**
 * The one path that opens a job, for every kind and every source. In ONE transaction, committed
 * together with concurrent opens (group commit) before the caller answers: the idempotency lookup
 * (a replay returns the stored answer and opens nothing), the opener's in-flight cap (429
 * too_many_in_flight), the reservation of the quoted price (402 from the ledger), the job row and
 * the idempotency record. Media jobs are opened IN_QUEUE and handed to the workers after the
 * commit; text jobs (chat) run in the request itself: IN_PROGRESS, owned by it until the deadline.
 */
export async function openJob(ctx: AppContext, r: NewJobRequest): Promise<OpenedJob> {
  const { who, model } = r;
  const { keyId, personId } = who;
  if (keyId === null && personId === null) throw new RangeError("openJob: an opener needs a key or a person");
  if (keyId === null && r.idempotency !== null)
    throw new RangeError("openJob: an Idempotency-Key is scoped to a key; a keyless opener has none");
  if (r.early && r.idempotency !== null)
    throw new RangeError("openJob: a stored answer is acknowledged at its commit; no early resolution");
  const inRequest = model.kind === "text";
  const quote = serializeQuote(r.quote);
  const now = Date.now();
  const deadline = now + model.time_limit_seconds * 1000;
  const id = Bun.randomUUIDv7();
  let reserved: HoldRow | null = null;
  const insert = async (tx: Sql): Promise<JobRow> => {
    const jobs = ctx.jobs.in(tx);
    // Keyed openers count their key (as before, one statement); keyless ones their person.
    const open = keyId !== null ? await jobs.openForKey(keyId) : await jobs.openForPerson(personId!);
    if (open >= who.maxInFlight) {
      const what = inRequest ? "calls" : "jobs";
      throw new DomainError(
        "too_many_in_flight",
        keyId !== null
          ? `This key already has ${who.maxInFlight} open ${what}; wait for one to finish.`
          : `You already have ${who.maxInFlight} open studio ${what}; wait for one to finish.`,
        { retryAfterSeconds: 1 },
      );
    }
    const hold = await ctx.ledger.in(tx).reserve({
      accountId: who.accountId,
      keyId,
      modelId: model.id,
      requestId: id,
      source: who.source,
      quotedUsdMicro: r.quote.amount_usd_micro,
    });
    reserved = hold;
    return jobs.insert({
      id,
      accountId: who.accountId,
      keyId,
      personId,
      modelId: model.id,
      kind: model.kind,
      source: who.source,
      provider: model.provider,
      input: r.input,
      quote,
      holdId: hold.id,
      webhookUrl: r.webhookUrl,
      deadlineAt: deadline,
      createdAt: now,
      // The request's own time limit ends a call run in the request at the same moment.
      runningUntil: inRequest ? deadline : undefined,
    });
  };
  const claim = r.idempotency;
  let durable = DURABLE_NOW;
  const opened: Once<JobRow> =
    claim === null
      ? r.early
        ? await ctx.submits.runCommitted(insert).then((c) => {
            durable = c.durable;
            return { replay: null, value: c.value };
          })
        : { replay: null, value: await ctx.submits.run(insert) }
      : await ctx.submits.run(
          async (tx) =>
            await ctx.idempotency.in(tx).once(
              keyId!,
              claim,
              async () => await insert(tx),
              async (job) => await r.answer!(ctx, job, tx),
            ),
        );
  if (opened.replay === null && !inRequest) {
    ctx.jobs.markQueued(opened.value);
    ctx.events.newWork(model.provider);
  }
  return { ...opened, durable, hold: opened.replay === null ? reserved : null };
}

export interface SubmitInput {
  who: Opener;
  modelId: string;
  body: unknown;
  /** webhook_url from the query (or its fal alias fal_webhook). */
  queryWebhook: string | null;
  /** A /queue submit's claim, kept in the job's transaction; null for /run (claimed around it). */
  idempotency: IdempotencyClaim | null;
}

/** The answer a /queue submit stores under its Idempotency-Key: the queued request, 202. */
async function queuedAnswer(ctx: AppContext, job: JobRow, tx: Sql): Promise<StoredResponse> {
  return { status: 202, body: JSON.stringify(await ctx.views.queued(job, { tx })) };
}

/**
 * A queue submit (/queue, /run and their fal aliases): resolve the model, validate the input
 * against its schema, resolve file references and price it; the async part (the webhook URL's
 * DNS check) runs before the job is opened (openJob: one group-committed transaction).
 */
export async function submitJob(ctx: AppContext, s: SubmitInput): Promise<OpenedJob> {
  const model = resolveModel(ctx, s.modelId, "queue");
  const body = s.body;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new DomainError("validation_error", "The request body must be a JSON object: the model input.", {
      param: "body",
    });
  }
  // Links to this server's own uploads (as fal.storage.upload returns them) count as their file ids.
  const { webhook_url: bodyWebhook, ...input } = ownFileUrlsToIds(body, ctx.publicUrl) as Record<
    string,
    unknown
  >;
  if (bodyWebhook !== undefined && typeof bodyWebhook !== "string") {
    throw new DomainError("bad_webhook_url", "webhook_url must be a string URL.", { param: "webhook_url" });
  }
  const webhookRaw = (bodyWebhook as string | undefined) ?? s.queryWebhook;
  await validateModelInput(model, input);
  const files = await resolveFileRefs(ctx.files, s.who.accountId, input);
  // Per-megapixel upscales are priced on an uploaded image's measured size.
  const quote = priceMediaInput(model, input, { imageSize: uploadedImageSize(files) });
  const webhookUrl = webhookRaw ? (await ctx.checkWebhookUrl(webhookRaw)).toString() : null;
  return openJob(ctx, {
    who: s.who,
    model,
    input: JSON.stringify(input),
    quote,
    webhookUrl,
    idempotency: s.idempotency,
    answer: queuedAnswer,
  });
}

/**
 * /run: a submit, then a wait for the job's final state (woken by its events) up to
 * run_wait_seconds, the client's disconnect or the server's shutdown; returns the job as it is
 * then. The caller claims its Idempotency-Key around the whole call.
 */
export async function runJob(ctx: AppContext, s: SubmitInput, signal: AbortSignal): Promise<JobRow> {
  const opened = await submitJob(ctx, s);
  return waitForFinal(
    ctx,
    opened.value!.id,
    ctx.live.limits.runWaitSeconds * 1000,
    AbortSignal.any([signal, ctx.shutdownSignal]),
  );
}

/**
 * Waits for a job to reach a final state, up to `ms`: woken by its events (from whichever instance
 * changed it), and re-reading it at least every JOB_POLL_MS, the guarantee when a hint is lost.
 */
export async function waitForFinal(
  ctx: AppContext,
  id: string,
  ms: number,
  signal?: AbortSignal,
): Promise<JobRow> {
  const deadline = Date.now() + ms;
  const watch = ctx.events.watch(id); // before the first read: a change after it is not missed
  try {
    for (;;) {
      const job = (await ctx.jobs.get(id))!;
      const left = deadline - Date.now();
      if (FINAL_STATUSES.includes(job.status) || left <= 0 || signal?.aborted) return job;
      await watch.wait(Math.min(left, JOB_POLL_MS), signal);
    }
  } finally {
    watch.close();
  }
}
