import type { IdempotencyClaim, IdempotencyStore, StoredResponse } from "../idempotency/idempotency.ts";
import { DomainError } from "../lib/errors.ts";
import { baseUrl } from "../lib/url.ts";
import type { QueueServices } from "../server/context.ts";
import { forFalClient } from "./fal-answers.ts";
import type { JobRow } from "./job-row.ts";

export interface RunRequestDeps {
  idempotency: Pick<IdempotencyStore, "claimRunning">;
  views: Pick<QueueServices["views"], "queued" | "output">;
  /** The public address: fal clients get the alias routes' URLs on it (baseUrl). */
  publicUrl: string;
}

/** What /run answers: a replay of the key's stored answer, a fresh answer, or a failed job for fal. */
export type RunOutcome =
  | { replay: StoredResponse }
  | { answer: StoredResponse; requestId: string | null }
  | { falFailed: JobRow };

/**
 * POST /v1/run: the Idempotency-Key is claimed for the whole wait (a duplicate meanwhile is 409),
 * `run` submits and waits (runJob), and the key is settled with the answer: a 200 output or a 202
 * queued request is kept, a failure frees the key. `fal`: the answer is shaped for fal clients.
 */
export async function runRequest(
  deps: RunRequestDeps,
  o: { keyId: string; claim: IdempotencyClaim | null; fal: boolean; run: () => Promise<JobRow> },
): Promise<RunOutcome> {
  const claim = await deps.idempotency.claimRunning(o.keyId, o.claim);
  if (claim.replay) return { replay: claim.replay };
  let answer: StoredResponse | null = null;
  try {
    const done = await o.run();
    if (done.status === "COMPLETED") {
      answer = { status: 200, body: JSON.stringify(await deps.views.output(done)) };
      return { answer, requestId: done.id };
    }
    if (done.status === "FAILED") {
      // fal clients retry a 502 /run, which would submit the job again: they get fal's 500.
      if (o.fal) return { falFailed: done };
      throw new DomainError(
        "generation_failed",
        done.error_message || "The generation failed; nothing was charged.",
        {
          extra: { request_id: done.id },
        },
      );
    }
    const view = await deps.views.queued(done);
    answer = {
      status: 202,
      body: JSON.stringify(o.fal ? forFalClient(baseUrl(deps), view) : view),
    };
    return { answer, requestId: null };
  } finally {
    await claim.settle(answer);
  }
}
