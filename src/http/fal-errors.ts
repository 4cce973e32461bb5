/**
 * fal's error shape, for the fal alias routes and fal clients on /v1/queue (src/queue/fal-http.ts,
 * submit-http.ts), next to the other doors' shapes (doors.ts). Unlike those, the status is fal's
 * and depends on the job, not only on the error (what fal's clients retry), so the handlers call
 * it themselves; the fal bodies that are not errors stay with the queue (src/queue/fal-answers.ts).
 */
import { DomainError } from "../lib/errors.ts";
import { errorBody, errorHeaders } from "./errors.ts";
import { requestMeta } from "./request-meta.ts";

/** The job an error is about: its id (`x-fal-request-id`) and, once FAILED, why. */
export interface FalJob {
  id: string;
  error_code: string | null;
  error_message: string | null;
}

/**
 * An error as fal's queue answers it: `detail` (the message; fal_client's `_raise_for_status` shows
 * `response.json()["detail"]`) and `error_type` (also in `X-Fal-Error-Type`) next to the contract's
 * `error` object, with `x-fal-request-id`. The status is fal's, chosen so neither client retries:
 * fal_client retries 408/409/429 and 502-504 without `x-fal-request-id` (`_should_retry_response`),
 * @fal-ai/client retries 429/502/503/504 on queue reads (QUEUE_RETRY_CONFIG).
 */
export function falError(
  request: Request,
  status: number,
  err: DomainError,
  errorType: string,
  job: FalJob,
  fields: Record<string, unknown> = {},
): Response {
  const id = requestMeta(request)?.id;
  return new Response(
    JSON.stringify({ ...fields, detail: err.message, error_type: errorType, ...errorBody(err, id) }),
    {
      status,
      headers: {
        "content-type": "application/json",
        "x-fal-request-id": job.id,
        "x-fal-error-type": errorType,
        ...(id ? { "x-request-id": id } : {}),
        ...errorHeaders(err),
      },
    },
  );
}

/**
 * The answer for a job that FAILED, for fal clients: 500 (what fal returns when the app raised),
 * which neither client retries on a result read or a /run. The contract's generation_failed code
 * stays in the body.
 */
export function falFailedResponse(request: Request, job: FalJob): Response {
  const code = job.error_code ?? "generation_failed";
  return falError(
    request,
    500,
    new DomainError("generation_failed", job.error_message || "The generation failed; nothing was charged.", {
      extra: { request_id: job.id },
    }),
    code,
    job,
  );
}
