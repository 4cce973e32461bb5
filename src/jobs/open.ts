/**
 * Opening a billed job: the one module every door goes through (docs/architecture.md "Opening a
 * job"). A door (the queue, /run, chat, the studio, the fal aliases, and whatever route comes next)
 * resolves its model (`resolveMediaModel` / `resolveTextModel`, models.ts), prices its input
 * (`prepareMediaJob`, media.ts, or its own text quote) and then calls ONE of three entry points,
 * named for how the opening is acknowledged:
 *
 * - `openJob`: answered once the opening is durable (a studio run, /run).
 * - `openJobOnce`: the same, under a short operation's Idempotency-Key whose answer is stored in the
 *   job's own transaction (a queue submit); a repeat replays that answer and opens nothing.
 * - `openCall`: a call run in the request (chat): resolved at the COMMIT, with a `durable` promise
 *   the caller awaits before it answers anything (docs/decisions.md "Durable commits").
 *
 * All three run the same steps in one group-committed transaction: the opener's in-flight cap, the
 * reservation of the quoted price (the ledger's balance and the key's monthly limit) and the job row.
 */
import type { Principal } from "../accounts/store.ts";
import type { Model } from "../catalog/model.ts";
import type { LiveSettings } from "../config/schema.ts";
import type { GroupCommit } from "../db/group-commit.ts";
import type { Sql } from "../db/sql.ts";
import type { IdempotencyClaim, IdempotencyStore, Once, StoredResponse } from "../idempotency/idempotency.ts";
import type { HoldRow, Ledger } from "../ledger/ledger.ts";
import { DomainError } from "../lib/errors.ts";
import { type Quote, serializeQuote } from "../pricing/quote.ts";
import type { JobEvents } from "../queue/events.ts";
import type { JobRow, WebhookBody } from "../queue/job-row.ts";
import type { JobStore } from "../queue/job-store.ts";

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
  /** The key's allowed_models (src/jobs/models.ts ModelAccess); null: every model (the studio). */
  allowedModels: readonly string[] | null;
}

/** The settings an opener's cap comes from; read at each request (`live` is replaced on reload). */
export interface OpenerDeps {
  live: Pick<LiveSettings, "limits" | "studio">;
}

/** An API key as an opener: its own in-flight cap, or the server's default. */
export function apiOpener(deps: OpenerDeps, p: Principal): Opener {
  return {
    accountId: p.accountId,
    keyId: p.keyId,
    personId: null,
    source: "API",
    maxInFlight: p.maxInFlight ?? deps.live.limits.inFlight,
    allowedModels: p.allowedModels,
  };
}

/**
 * A person signed in to the studio as an opener: no key (no key limit, no idempotency scope), the
 * account the session is looking at, and the per-person cap `[studio] in_flight_per_person`.
 */
export function studioOpener(deps: OpenerDeps, session: { accountId: string; personId: string }): Opener {
  return {
    accountId: session.accountId,
    keyId: null,
    personId: session.personId,
    source: "STUDIO",
    maxInFlight: deps.live.studio.inFlightPerPerson,
    allowedModels: null,
  };
}

/** What a job is opened with: the door has resolved the model, validated and priced the input. */
export interface JobToOpen {
  who: Opener;
  model: Model;
  /** The input as stored with the job (JSON text). */
  input: string;
  quote: Quote;
  webhookUrl: string | null;
  /** What the webhook carries (Replicate's door: its prediction); the request record by default. */
  webhookBody?: WebhookBody;
}

/** What opening a job uses: the stores it writes in its transaction, the group commit, the queue's wake-up. */
export interface OpenJobDeps {
  /** The in-flight counts and the insert (bound to the transaction), then the hand-over to the workers. */
  jobs: Pick<JobStore, "in" | "markQueued">;
  /** The reservation (bound to the transaction). */
  ledger: Pick<Ledger, "in">;
  /** The stored answer of an Idempotency-Key (openJobOnce, bound to the transaction). */
  idempotency: Pick<IdempotencyStore, "in">;
  /** Concurrent opens share one commit (src/db/group-commit.ts). */
  submits: Pick<GroupCommit, "run" | "runCommitted">;
  /** Wakes a worker of the provider after the commit. */
  events: Pick<JobEvents, "newWork">;
}

/**
 * A job opened, with its hold as the reservation wrote it (the submit's 202 does not read it again).
 * `replay: null` gives it the shape of `OpenedOnce`, so a door that opens either way reads one shape.
 */
export interface OpenedJob {
  replay: null;
  value: JobRow;
  hold: HoldRow;
}

/** A job opened under an Idempotency-Key, or the key's stored answer (a replay: no job, no hold). */
export type OpenedOnce = Once<JobRow> & { hold: HoldRow | null };

/** A call opened in the request, resolved at its COMMIT: await `durable` before answering anything. */
export interface OpenedCall extends OpenedJob {
  durable: Promise<void>;
}

/** The answer stored under a short operation's Idempotency-Key, rendered inside the job's transaction. */
export type StoredAnswer = (job: JobRow, tx: Sql) => StoredResponse | Promise<StoredResponse>;

/** Opens a job, answered once the opening is durable. */
export async function openJob(deps: OpenJobDeps, j: JobToOpen): Promise<OpenedJob> {
  const o = opening(deps, j);
  const job = await deps.submits.run(o.insert);
  handOver(deps, j.model, job);
  return { replay: null, value: job, hold: o.hold() };
}

/**
 * Opens a job under a short operation's Idempotency-Key (a queue submit): the key is looked up and
 * its `answer` stored in the job's own transaction; a repeat replays the answer and opens nothing.
 * Without a key (`claim` null) it is `openJob`. Long operations (/run, chat) claim their key around
 * the whole call instead (IdempotencyStore.claimRunning) and use `openJob` / `openCall`.
 */
export async function openJobOnce(
  deps: OpenJobDeps,
  j: JobToOpen,
  once: { claim: IdempotencyClaim | null; answer: StoredAnswer },
): Promise<OpenedOnce> {
  const { claim, answer } = once;
  if (claim === null) return await openJob(deps, j);
  // The stored answer is written after the reservation: its COMMIT cannot be sent with it.
  const o = opening(deps, j, false);
  const keyId = j.who.keyId;
  if (keyId === null)
    throw new RangeError("openJobOnce: an Idempotency-Key is scoped to a key; a keyless opener has none");
  const opened = await deps.submits.run(
    async (tx) =>
      await deps.idempotency.in(tx).once(
        keyId,
        claim,
        async () => await o.insert(tx),
        async (job) => await answer(job, tx),
      ),
  );
  if (opened.replay !== null) return { ...opened, hold: null };
  handOver(deps, j.model, opened.value);
  return { ...opened, hold: o.hold() };
}

/**
 * Opens a call run in the request (chat: a text job, IN_PROGRESS, owned by the request until its
 * deadline), resolved at the reservation's COMMIT before it is durable (GroupCommit.runCommitted),
 * so the upstream call starts while the WAL sync runs. The caller must await `durable` before it
 * answers anything (docs/decisions.md "Durable commits"). Never with a stored Idempotency answer.
 */
export async function openCall(deps: OpenJobDeps, j: JobToOpen): Promise<OpenedCall> {
  const o = opening(deps, j);
  const c = await deps.submits.runCommitted(o.insert);
  handOver(deps, j.model, c.value);
  return { replay: null, value: c.value, hold: o.hold(), durable: c.durable };
}

/**
 * The steps inside the opening's transaction: the opener's in-flight cap (429
 * too_many_in_flight), the reservation of the quoted price (402 from the ledger: the balance or
 * the key's monthly limit) and the job row. Media jobs are opened IN_QUEUE; text jobs (chat) run in
 * the request itself: IN_PROGRESS, owned by it until the deadline.
 */
function opening(deps: OpenJobDeps, j: JobToOpen, last = true) {
  const { who, model } = j;
  const { keyId, personId } = who;
  if (keyId === null && personId === null) throw new RangeError("openJob: an opener needs a key or a person");
  const inRequest = model.kind === "text";
  const quote = serializeQuote(j.quote);
  const now = Date.now();
  const deadline = now + model.time_limit_seconds * 1000;
  const id = Bun.randomUUIDv7();
  let reserved: HoldRow | null = null;
  const insert = async (tx: Sql): Promise<JobRow> => {
    const jobs = deps.jobs.in(tx);
    let job: JobRow | null = null;
    // The job row is written beside the hold, and the opener's in-flight count (keyed openers
    // their key, keyless ones their person) taken beside the key's and the account's money: the
    // rows every opening of a key waits for are held for one round trip on PostgreSQL. A refusal
    // rolls the whole opening back.
    reserved = await deps.ledger.in(tx).reserve(
      {
        accountId: who.accountId,
        keyId,
        modelId: model.id,
        requestId: id,
        source: who.source,
        quotedUsdMicro: j.quote.amount_usd_micro,
      },
      {
        beforeLocks: async (hold) => {
          job = await jobs.insert({
            id,
            accountId: who.accountId,
            keyId,
            personId,
            modelId: model.id,
            kind: model.kind,
            source: who.source,
            provider: model.provider,
            route: model.route ?? 0,
            input: j.input,
            quote,
            holdId: hold.id,
            webhookUrl: j.webhookUrl,
            webhookBody: j.webhookBody,
            deadlineAt: deadline,
            createdAt: now,
            // The request's own time limit ends a call run in the request at the same moment.
            runningUntil: inRequest ? deadline : undefined,
            slotTaken: true,
          });
        },
        // Nothing follows in the transaction (but a stored Idempotency answer): on PostgreSQL the
        // COMMIT goes with the locks' round, and the cap refuses by a failing statement.
        last,
        withLocks: async () => {
          if (await jobs.takeSlot(keyId, personId, who.maxInFlight)) return;
          const what = inRequest ? "calls" : "jobs";
          throw new DomainError(
            "too_many_in_flight",
            keyId !== null
              ? `This key already has ${who.maxInFlight} open ${what}; wait for one to finish.`
              : `You already have ${who.maxInFlight} open studio ${what}; wait for one to finish.`,
            { retryAfterSeconds: 1 },
          );
        },
      },
    );
    return job!;
  };
  return { insert, hold: (): HoldRow => reserved! };
}

/** After the commit: a media job goes to the queue and wakes a worker; a text job runs in the request. */
function handOver(deps: OpenJobDeps, model: Model, job: JobRow): void {
  if (model.kind === "text") return;
  deps.jobs.markQueued(job);
  deps.events.newWork(model.provider);
}
