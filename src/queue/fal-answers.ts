import { errorBody, errorHeaders } from "../http/errors.ts";
import { requestMeta } from "../http/request-meta.ts";
import { DomainError } from "../lib/errors.ts";
import type { JobRow } from "./job-row.ts";
import { falQueueUrls } from "./views.ts";

/**
 * fal's own clients, by the User-Agent they send: the Python `fal-client` sends
 * "fal-client/<version> (python)" (fal_client/client.py, USER_AGENT), `@fal-ai/client` sends
 * "@fal-ai/client/<version>" outside browsers (fal-ai/fal-js libs/client/src/runtime.ts, getUserAgent),
 * and the AI SDK's fal provider, whose video model reads the submit's response_url and polls it
 * like fal_client: "ai-sdk/fal/<version> ..." (@ai-sdk/fal/src/fal-provider.ts), replaced by
 * "ai/<version> ..." when called through the `ai` package (its call headers win over the
 * provider's). Only the fal provider of the AI SDK posts to the fal-shaped queue routes.
 */
const FAL_USER_AGENT = /^(fal-client\/|@fal-ai\/client\/|ai-sdk\/fal\/|ai\/\d)/;

export function isFalClient(request: Request): boolean {
  return FAL_USER_AGENT.test(request.headers.get("user-agent") ?? "");
}

/**
 * A queued-request body for fal clients: the Python client polls the status_url, reads the
 * response_url and cancels at the cancel_url it is given (SyncRequestHandle/AsyncRequestHandle
 * are built from the submit reply), so those point at the alias routes below.
 */
export function forFalClient<T extends { request_id: string; model_id: string }>(base: string, body: T): T {
  return { ...body, ...falQueueUrls(base, body.model_id, body.request_id) };
}

/**
 * fal clients poll only until COMPLETED (fal_client `_parse_status` raises on any other status;
 * @fal-ai/client `subscribeToStatus` resolves on COMPLETED only), so on these alias routes a FAILED
 * or CANCELLED job reads as COMPLETED with `error` and `error_type`, as fal's own queue reports a
 * request that ended in an error. The plain /v1/requests routes keep the spec's statuses.
 */
export function falStatus(base: string, body: Record<string, unknown>): Record<string, unknown> {
  const withUrls = forFalClient(base, body as { request_id: string; model_id: string });
  const status = body.status as string;
  if (status !== "FAILED" && status !== "CANCELLED") return withUrls;
  const error = body.error as { code: string; message: string } | null;
  return {
    ...withUrls,
    status: "COMPLETED",
    error:
      status === "CANCELLED" ? "The request was cancelled." : (error?.message ?? "The generation failed."),
    error_type: status === "CANCELLED" ? "cancelled" : (error?.code ?? "generation_failed"),
  };
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
  job: JobRow,
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
export function falFailedResponse(request: Request, job: JobRow): Response {
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
