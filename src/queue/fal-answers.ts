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
