import { type AnyElysia, Elysia, ValidationError } from "elysia";
import { accountRoutes } from "../accounts/http.ts";
import { adminRoutes } from "../admin/http.ts";
import { anthropicRoutes } from "../anthropic/http.ts";
import { catalogRoutes } from "../catalog/http.ts";
import { chatRoutes } from "../chat/http.ts";
import { codeAdminRoutes } from "../codes/admin-http.ts";
import { redeemRoutes } from "../codes/http.ts";
import { consoleRoutes, frontDoorRoutes } from "../console/http.ts";
import { docsRoutes } from "../docs/http.ts";
import { falStorageRoutes } from "../files/fal-storage-http.ts";
import { outputRoutes } from "../files/outputs-http.ts";
import { fileRoutes } from "../files/uploads-http.ts";
import { healthRoutes } from "../health/http.ts";
import { parseJsonCapped } from "../http/body-limit.ts";
import { doorErrorResponse, doorOf } from "../http/doors.ts";
import { errorResponse } from "../http/errors.ts";
import { MethodIndex } from "../http/method-not-allowed.ts";
import { beginRequest, type PeerSource, requestMeta } from "../http/request-meta.ts";
import { validationToDomainError } from "../http/validation.ts";
import { DomainError } from "../lib/errors.ts";
import { errorFields, log } from "../lib/log.ts";
import { requestArrived } from "../lib/low-priority.ts";
import { metricsRoutes } from "../metrics/http.ts";
import { openaiMediaRoutes } from "../openai/media-http.ts";
import { orderAdminRoutes } from "../payments/admin-http.ts";
import { paymentRoutes } from "../payments/http.ts";
import { estimateRoutes } from "../pricing/http.ts";
import { cogWebhookRoutes } from "../providers/cog-webhook-http.ts";
import { falAliasRoutes } from "../queue/fal-http.ts";
import { falStreamRoutes } from "../queue/fal-stream-http.ts";
import { queueRoutes } from "../queue/http.ts";
import { replicateRoutes } from "../replicate/http.ts";
import { responsesRoutes } from "../responses/http.ts";
import type { AppContext } from "../server/context.ts";
import { videoRoutes } from "../videos/http.ts";
import { webhookRoutes } from "../webhooks/http.ts";

export type App = Awaited<ReturnType<typeof createApp>>;

/**
 * Assembles the HTTP API: request ids, the contract's error body on every path, then the domain
 * modules. Handlers live in their domain folders; this file only wires them. `peers` is the server
 * the requests arrive on (Bun's `Server`, whose `requestIP` gives the socket's address:
 * `clientAddress` in request-meta.ts); without it no request has a client address.
 */
export function createApp(ctx: AppContext, options: { peers?: PeerSource } = {}) {
  const peers = options.peers ?? null;
  let methods: MethodIndex | null = null;
  // The finished app, for the handlers that describe it (405 index, OpenAPI document).
  let self: AnyElysia | null = null;
  // The console is mounted or not at start ([console] enabled); see src/console/http.ts.
  const consoleMounted = ctx.live.console.enabled;

  const app = new Elysia({ normalize: false })
    .onRequest(({ request, set }) => {
      requestArrived(); // the console's pages step aside for it (src/lib/low-priority.ts)
      set.headers["x-request-id"] = beginRequest(request, peers).id;
    })
    // JSON bodies are read with a size cap (Bun's own limit would answer a bare 413).
    .onParse({ as: "global" }, ({ request, contentType, path }) => {
      // Payment notifications are verified over their raw bytes: src/payments/http.ts reads them. A
      // cog webhook's token is checked before its body (up to 86 MiB) is read: cog-webhook-http.ts.
      if (path.startsWith("/payments/") || path.startsWith("/providers/")) return null;
      if (contentType === "application/json" || contentType?.startsWith("application/json;"))
        return parseJsonCapped(request);
      // Any other body is left unread: uploads stream it themselves; JSON routes then see no body
      // and answer 400 from their schema.
      return null;
    })
    .onTransform({ as: "global" }, ({ request, route }) => {
      const meta = requestMeta(request);
      if (meta) meta.route = route;
    })
    .onAfterHandle({ as: "global" }, ({ request, set }) => {
      const extra = requestMeta(request)?.extraHeaders;
      if (extra) Object.assign(set.headers, extra);
    })
    .onError({ as: "global" }, ({ code, error, request, path }) => {
      // Whatever goes wrong while rendering an error must still answer the contract's JSON (never
      // Bun's plain-text "Something went wrong!").
      let id: string | undefined;
      let headers: Record<string, string> = {};
      try {
        const meta = requestMeta(request);
        id = meta?.id;
        headers = { ...meta?.extraHeaders, ...(id ? { "x-request-id": id } : {}) };
        return renderError(code, error, request, path, id, headers, () => {
          if (!methods) methods = new MethodIndex(self?.routes ?? []);
          return methods;
        });
      } catch (err) {
        try {
          log("error", "error handler failed", { id, method: request.method, path, ...errorFields(err) });
        } catch {}
        return errorResponse(
          new DomainError("internal_error", "An unexpected error occurred; it has been logged."),
          id,
          id ? { "x-request-id": id } : {},
        );
      }
    })
    .use(healthRoutes(ctx))
    .use(catalogRoutes(ctx))
    .use(accountRoutes(ctx))
    .use(redeemRoutes(ctx))
    .use(estimateRoutes(ctx))
    .use(queueRoutes(ctx))
    .use(falAliasRoutes(ctx))
    .use(falStreamRoutes(ctx))
    .use(outputRoutes(ctx))
    .use(fileRoutes(ctx))
    .use(falStorageRoutes(ctx))
    .use(webhookRoutes(ctx))
    .use(chatRoutes(ctx))
    .use(responsesRoutes(ctx))
    .use(anthropicRoutes(ctx))
    .use(replicateRoutes(ctx))
    .use(videoRoutes(ctx))
    .use(openaiMediaRoutes(ctx))
    .use(adminRoutes(ctx))
    .use(codeAdminRoutes(ctx))
    .use(orderAdminRoutes(ctx))
    .use(paymentRoutes(ctx))
    .use(cogWebhookRoutes(ctx))
    .use(metricsRoutes(ctx))
    .use(docsRoutes(ctx, () => self!))
    .use(frontDoorRoutes(ctx, consoleMounted))
    .use(consoleMounted ? consoleRoutes(ctx) : new Elysia());

  self = app;
  return app;
}

/** The contract's error body for whatever a handler, hook or Elysia itself threw. */
function renderError(
  code: unknown,
  error: unknown,
  request: Request,
  path: string,
  id: string | undefined,
  headers: Record<string, string>,
  methods: () => MethodIndex,
): Response {
  // Each door answers in its own client's error shape (src/http/doors.ts).
  const door = doorOf(path);
  if (error instanceof DomainError) return doorErrorResponse(door, error, id, headers);
  if (code === "NOT_FOUND") {
    const allowed = methods().allowed(path);
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      return doorErrorResponse(
        door,
        new DomainError(
          "method_not_allowed",
          `${request.method} is not allowed on ${path}; use ${allowed.join(", ")}.`,
        ),
        id,
        { ...headers, allow: allowed.join(", ") },
      );
    }
    return doorErrorResponse(
      door,
      new DomainError("not_found", `No route ${request.method} ${path}.`),
      id,
      headers,
    );
  }
  if (code === "PARSE") {
    // Elysia wraps whatever the parse hook throws (size cap, nesting limit) in its ParseError.
    const cause = error instanceof Error ? error.cause : undefined;
    if (cause instanceof DomainError) return doorErrorResponse(door, cause, id, headers);
    return doorErrorResponse(
      door,
      new DomainError("validation_error", "The request body is not valid JSON."),
      id,
      headers,
    );
  }
  if (code === "VALIDATION" && error instanceof ValidationError) {
    // A response that fails its own schema is the server's fault, not the client's.
    if (error.type === "response") {
      log("error", "response failed its schema", { id, method: request.method, path, ...errorFields(error) });
      return doorErrorResponse(
        door,
        new DomainError("internal_error", "An unexpected error occurred; it has been logged."),
        id,
        headers,
      );
    }
    return doorErrorResponse(door, validationToDomainError(error), id, headers);
  }
  log("error", "unhandled error", {
    id,
    method: request.method,
    path,
    code: String(code),
    ...errorFields(error),
  });
  return doorErrorResponse(
    door,
    new DomainError("internal_error", "An unexpected error occurred; it has been logged."),
    id,
    headers,
  );
}
