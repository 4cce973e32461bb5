/**
 * A mock of fal's queue API (https://queue.fal.run) for tests, faithful to its shapes:
 *   POST /{model_id}                              -> {request_id, status_url, response_url, cancel_url, queue_position}
 *   GET  /{owner}/{alias}/requests/{id}/status    -> {status: IN_QUEUE|IN_PROGRESS|COMPLETED, queue_position?, logs?}
 *   GET  /{owner}/{alias}/requests/{id}           -> the model output, or an error status with {detail}
 *   PUT  /{owner}/{alias}/requests/{id}/cancel    -> {status: "CANCELLATION_REQUESTED"}
 * (owner/alias are the first two segments of the model id; "workflows/..." and "comfy/..." keep three.)
 * Every call needs `Authorization: Key <key>` (else 401). Behaviour is set per model id
 * (`mock.on(modelId, {...})`) or per request (`mock.createRequest(modelId, {...})`), with faults:
 * 429/503/500 statuses, malformed JSON, dropped connections, a lost job (404), a failed job.
 *
 * A failed request, as fal answers it (docs.fal.ai/documentation/model-apis/request-errors): its
 * status is COMPLETED (fal-js libs/client/src/types/common.ts: IN_QUEUE | IN_PROGRESS | COMPLETED)
 * and its result read answers the status the request ended with (504 request_timeout, 503
 * runner_disconnected, 500, 422...) with `{detail, error_type}` and the same value in the
 * X-Fal-Error-Type header (`fail.errorType`); model validation errors carry a `detail` list and no
 * error_type. fal-js reads such an answer as an ApiError holding the body (libs/client/src/
 * response.ts defaultResponseHandler; queue.ts `result` retries 429/502/503/504 three times first).
 * `finalStatus` makes the status itself FAILED or CANCELED (with `error`/`error_type`), as some
 * queues and proxies in front of fal answer.
 */

export type Fault =
  | { status: number; detail?: unknown; retryAfter?: number }
  | "malformed" // 200 with a body that is not JSON
  | "drop" // the connection closes without an answer
  | { delayMs: number }; // answer normally, but only after a pause

export interface Behaviour {
  /** Status polls answering IN_QUEUE, then IN_PROGRESS, before COMPLETED. */
  queuePolls?: number;
  progressPolls?: number;
  /** Log lines, revealed one per IN_PROGRESS poll (cumulative, as fal does); all of them at COMPLETED. */
  logs?: string[];
  /** The result body (the model output). */
  result?: unknown;
  /** Faults consumed one per call, in order; then normal answers. */
  submit?: Fault[];
  status?: Fault[];
  resultFaults?: Fault[];
  /** The job fails on fal: it shows COMPLETED and its result read answers this. */
  fail?: { status: number; detail: unknown; errorType?: string };
  /** The status ends FAILED or CANCELED instead of COMPLETED. */
  finalStatus?: { status: "FAILED" | "CANCELED"; error?: string; errorType?: string };
  /** Newer fal: a failed job's COMPLETED status carries `error`. */
  statusError?: string;
  /** fal loses the job: status and result answer 404. */
  lose?: boolean;
  /** A status body with this status string instead of the normal progression. */
  weirdStatus?: string;
  /** Submit reply without status_url/response_url/cancel_url, or with URLs on another host. */
  replyUrls?: "none" | "foreign";
  /** Submit reply without a request_id. */
  noRequestId?: boolean;
}

export interface MockCall {
  method: string;
  path: string;
  query: string;
  authorization: string | null;
  body?: unknown;
}

interface MockRequest {
  id: string;
  modelId: string;
  app: string;
  input: unknown;
  polls: number;
  behaviour: Behaviour;
  statusFaults: Fault[];
  resultFaults: Fault[];
  cancelled: boolean;
}

export interface MockFal {
  url: string;
  key: string;
  calls: MockCall[];
  requests: Map<string, MockRequest>;
  on(modelId: string, behaviour: Behaviour): void;
  /** A request that exists on "fal" already (as if submitted by an earlier attempt). */
  createRequest(modelId: string, behaviour?: Behaviour): string;
  callsTo(kind: "submit" | "status" | "result" | "cancel", modelOrApp?: string): MockCall[];
  stop(): void;
}

const NAMESPACES = new Set(["workflows", "comfy"]);
export function appOf(modelId: string): string {
  const parts = modelId.split("/");
  return parts.slice(0, NAMESPACES.has(parts[0]!) ? 3 : 2).join("/");
}

export const DEFAULT_IMAGE_RESULT = {
  images: [
    { url: "https://v3.fal.media/files/mock/out.png", content_type: "image/png", width: 1024, height: 768 },
  ],
  seed: 42,
  has_nsfw_concepts: [false],
  timings: { inference: 1.25 },
  prompt: "a cat",
};

export function startMockFal(key = "fal-test-key-0123456789abcdef"): MockFal {
  const byModel = new Map<string, Behaviour>();
  const submitFaults = new Map<string, Fault[]>();
  const requests = new Map<string, MockRequest>();
  const calls: MockCall[] = [];

  const make = (modelId: string, behaviour: Behaviour, input: unknown): MockRequest => {
    const r: MockRequest = {
      id: crypto.randomUUID(),
      modelId,
      app: appOf(modelId),
      input,
      polls: 0,
      behaviour,
      statusFaults: [...(behaviour.status ?? [])],
      resultFaults: [...(behaviour.resultFaults ?? [])],
      cancelled: false,
    };
    requests.set(r.id, r);
    return r;
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 30,
    async fetch(req): Promise<Response> {
      const u = new URL(req.url);
      const path = decodeURIComponent(u.pathname);
      const text = req.method === "POST" || req.method === "PUT" ? await req.text() : "";
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      calls.push({
        method: req.method,
        path,
        query: u.search,
        authorization: req.headers.get("authorization"),
        body,
      });
      const auth = req.headers.get("authorization");
      if (auth !== `Key ${key}`) {
        // Echoes what it was given, as some servers do: the client must redact its key.
        return Response.json(
          { detail: `Invalid authorization header: ${auth ?? "(none)"}` },
          { status: 401 },
        );
      }

      const m = /^\/(.+)\/requests\/([^/]+)(\/status|\/cancel)?$/.exec(path);
      if (m) {
        const [, app, id, tail] = m;
        const r = requests.get(id!);
        if (!r || r.app !== app || r.behaviour.lose)
          return Response.json({ detail: "Request not found" }, { status: 404 });
        if (tail === "/cancel" && req.method === "PUT") {
          r.cancelled = true;
          return Response.json({ status: "CANCELLATION_REQUESTED" }, { status: 202 });
        }
        if (req.method !== "GET") return Response.json({ detail: "Method not allowed" }, { status: 405 });
        if (tail === "/status") {
          const fault = r.statusFaults.shift();
          if (fault) {
            const answer = await applyFault(fault);
            if (answer) return answer;
          }
          return Response.json(statusOf(r, u.searchParams.get("logs") === "1", server.url.origin));
        }
        const fault = r.resultFaults.shift();
        if (fault) {
          const answer = await applyFault(fault);
          if (answer) return answer;
        }
        if (!done(r)) return Response.json({ detail: "Request is still in progress" }, { status: 400 });
        const fail = r.behaviour.fail;
        if (fail) {
          const typed = fail.errorType !== undefined;
          return Response.json(
            { detail: fail.detail, ...(typed ? { error_type: fail.errorType } : {}) },
            { status: fail.status, headers: typed ? { "x-fal-error-type": fail.errorType! } : {} },
          );
        }
        return Response.json(r.behaviour.result ?? DEFAULT_IMAGE_RESULT);
      }

      if (req.method !== "POST") return Response.json({ detail: "Not found" }, { status: 404 });
      const modelId = path.slice(1);
      const behaviour = byModel.get(modelId) ?? {};
      if (!submitFaults.has(modelId)) submitFaults.set(modelId, [...(behaviour.submit ?? [])]);
      const fault = submitFaults.get(modelId)!.shift();
      if (fault) {
        const answer = await applyFault(fault);
        if (answer) return answer;
      }
      if (behaviour.noRequestId) return Response.json({ status: "IN_QUEUE" });
      const r = make(modelId, behaviour, body);
      const origin = behaviour.replyUrls === "foreign" ? "https://evil.example" : server.url.origin;
      const prefix = `${origin}/${r.app}/requests/${r.id}`;
      return Response.json({
        request_id: r.id,
        ...(behaviour.replyUrls === "none"
          ? {}
          : { status_url: `${prefix}/status`, response_url: prefix, cancel_url: `${prefix}/cancel` }),
        queue_position: 2,
      });
    },
  });

  const mock: MockFal = {
    url: server.url.origin,
    key,
    calls,
    requests,
    on(modelId, behaviour) {
      byModel.set(modelId, behaviour);
      submitFaults.delete(modelId);
    },
    createRequest(modelId, behaviour = {}) {
      return make(modelId, behaviour, null).id;
    },
    callsTo(kind, model) {
      return calls.filter((c) => {
        const m = /^\/(.+)\/requests\/[^/]+(\/status|\/cancel)?$/.exec(c.path);
        const k = !m ? "submit" : m[2] === "/status" ? "status" : m[2] === "/cancel" ? "cancel" : "result";
        if (k !== kind) return false;
        if (!model) return true;
        return m ? m[1] === appOf(model) || m[1] === model : c.path.slice(1) === model;
      });
    },
    stop: () => server.stop(true),
  };
  return mock;
}

function done(r: MockRequest): boolean {
  const b = r.behaviour;
  return r.polls > (b.queuePolls ?? 1) + (b.progressPolls ?? 1);
}

function statusOf(r: MockRequest, withLogs: boolean, origin: string): Record<string, unknown> {
  const b = r.behaviour;
  r.polls++;
  if (b.weirdStatus) return { status: b.weirdStatus };
  const q = b.queuePolls ?? 1;
  const p = b.progressPolls ?? 1;
  const lines = b.logs ?? [];
  const logs = (n: number) =>
    lines.slice(0, n).map((message, i) => ({
      message,
      level: "INFO",
      source: "user",
      timestamp: `2025-01-01T00:00:0${i}Z`,
    }));
  const urls = { response_url: `${origin}/${r.app}/requests/${r.id}` };
  if (r.polls <= q) return { status: "IN_QUEUE", queue_position: q - r.polls, ...urls };
  if (r.polls <= q + p) {
    return { status: "IN_PROGRESS", ...(withLogs ? { logs: logs(r.polls - q) } : {}), ...urls };
  }
  const final = b.finalStatus;
  if (final) {
    return {
      status: final.status,
      ...(withLogs ? { logs: logs(lines.length) } : {}),
      ...(final.error ? { error: final.error } : {}),
      ...(final.errorType ? { error_type: final.errorType } : {}),
      ...urls,
    };
  }
  return {
    status: "COMPLETED",
    ...(withLogs ? { logs: logs(lines.length) } : {}),
    metrics: { inference_time: 1.2 },
    ...(b.statusError ? { error: b.statusError, error_type: "runner_error" } : {}),
    ...urls,
  };
}

async function applyFault(fault: Fault): Promise<Response | null> {
  if (fault === "malformed")
    return new Response("<html>oops{", { headers: { "content-type": "application/json" } });
  if (fault === "drop") {
    // Closes the socket without any answer: the client sees ECONNRESET.
    return new Response(
      new ReadableStream({
        pull(c) {
          c.error(undefined);
        },
      }),
    );
  }
  if ("delayMs" in fault) {
    await Bun.sleep(fault.delayMs);
    return null;
  }
  return Response.json(
    { detail: fault.detail ?? `mock fault ${fault.status}` },
    { status: fault.status, headers: fault.retryAfter ? { "retry-after": String(fault.retryAfter) } : {} },
  );
}
