import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pollUntil, startFunded } from "../helpers/api.ts";

/**
 * The Python `fal-client` (PyPI) is not in the package mirror these machines reach, so this test
 * replays exactly the requests it sends and checks the answers against exactly the rules it applies.
 * Source: github.com/fal-ai/fal, projects/fal_client/src/fal_client/client.py (and auth.py).
 *
 * Requests (httpx.Client built in `SyncClient._client`/`AsyncClient._client`):
 * - headers `Authorization: Key <FAL_KEY>` and `User-Agent: fal-client/0.2.2 (python)` (USER_AGENT);
 * - submit: `POST https://{FAL_QUEUE_RUN_HOST}/{application}` with the JSON input
 *   (QUEUE_URL_FORMAT; FAL_QUEUE_RUN_HOST comes from the environment in auth.py, the scheme is
 *   always https), then status_url / response_url / cancel_url are read from the reply (`submit`);
 * - `handle.status(with_logs=...)`: `GET status_url` with `params={"logs": with_logs}` (httpx
 *   renders the bool as `logs=true` / `logs=false`);
 * - `handle.get()`: polls status (iter_events) until `Completed`, then `GET response_url`;
 * - `handle.cancel()`: `PUT cancel_url`, no body;
 * - `fal_client.status/result/cancel(app, request_id)` build the same URLs themselves
 *   (`from_request_id`: `{QUEUE_URL_FORMAT}{owner}/{alias}/requests/{id}[/status|/cancel]`).
 */
const USER_AGENT = "fal-client/0.2.2 (python)";

/**
 * `_BaseRequestHandle._parse_status`: IN_QUEUE needs `queue_position`, IN_PROGRESS and COMPLETED
 * need `logs` (metrics optional); any other status is `ValueError: Unknown status: ...`.
 */
function parseStatus(data: Record<string, unknown>): "Queued" | "InProgress" | "Completed" {
  if (data.status === "IN_QUEUE") {
    if (!("queue_position" in data)) throw new Error("KeyError: 'queue_position'");
    return "Queued";
  }
  if (data.status === "IN_PROGRESS" || data.status === "COMPLETED") {
    if (!("logs" in data)) throw new Error("KeyError: 'logs'");
    return data.status === "IN_PROGRESS" ? "InProgress" : "Completed";
  }
  throw new Error(`ValueError: Unknown status: ${String(data.status)}`);
}

/**
 * `_should_retry_response`: 408/409/429 (RETRY_CODES) are retried, up to MAX_ATTEMPTS = 10 with
 * exponential back-off; 502/503/504 (INGRESS_ERROR_CODES) only without `x-fal-request-id` and
 * with "nginx" in the body (`_is_ingress_error`); a 504 with X-Fal-Request-Timeout-Type never.
 */
function pythonRetries(res: Response, text: string): boolean {
  if (res.status === 504 && res.headers.get("x-fal-request-timeout-type")) return false;
  if ([502, 503, 504].includes(res.status) && !res.headers.has("x-fal-request-id") && text.includes("nginx"))
    return true;
  return [408, 409, 429].includes(res.status);
}

/** `_raise_for_status`: the FalClientHTTPError message is `response.json()["detail"]`, else the text. */
function pythonErrorMessage(text: string): string {
  try {
    const detail = (JSON.parse(text) as { detail?: unknown }).detail;
    if (detail !== undefined) return String(detail);
  } catch {}
  return text;
}

let s: Awaited<ReturnType<typeof startFunded>>;
const headers = () => ({
  authorization: `Key ${s.defaultKey}`,
  "user-agent": USER_AGENT,
  accept: "*/*",
  "accept-encoding": "gzip, deflate",
  connection: "keep-alive",
});

/** One request as httpx sends it, answered once: never a response the client would retry. */
async function py(method: string, url: string, json?: unknown) {
  const res = await fetch(url, {
    method,
    headers: {
      ...headers(),
      ...(json !== undefined ? { "content-type": "application/json" } : { "content-length": "0" }),
    },
    body: json !== undefined ? JSON.stringify(json) : method === "PUT" ? "" : undefined,
  });
  const text = await res.text();
  expect(pythonRetries(res, text)).toBe(false);
  return { res, text, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

interface Handle {
  request_id: string;
  status_url: string;
  response_url: string;
  cancel_url: string;
}

/** `SyncClient.submit`: POST to the queue host; the handle is the reply's four fields. */
async function submit(app: string, input: unknown): Promise<Handle> {
  const { res, body } = await py("POST", `${s.url}/v1/queue/${app}`, input);
  expect(res.status).toBe(202);
  return body as unknown as Handle;
}

const status = async (h: Handle, withLogs = false) =>
  parseStatus((await py("GET", `${h.status_url}?logs=${withLogs ? "true" : "false"}`)).body);

/** `SyncRequestHandle.get`: iter_events until Completed (interval 0.1 s), then the result read. */
async function get(h: Handle) {
  const deadline = Date.now() + 20_000;
  while ((await status(h)) !== "Completed") {
    if (Date.now() > deadline) throw new Error("never Completed");
    await Bun.sleep(100);
  }
  return await py("GET", h.response_url);
}

beforeAll(async () => {
  s = await startFunded("[queue]\nconcurrency = { sandbox = 1 }\n");
});
afterAll(() => s.cleanup());

describe("fal-client (Python) requests against gengate", () => {
  test("the submit reply hands a fal client the fal alias URLs; other clients keep the native ones", async () => {
    const h = await submit("sandbox/image", { prompt: "urls", width: 64, height: 64 });
    const at = `${s.url}/v1/queue/sandbox/image/requests/${h.request_id}`;
    expect(h.status_url).toBe(`${at}/status`);
    expect(h.response_url).toBe(at);
    expect(h.cancel_url).toBe(`${at}/cancel`);
    const plain = (await (
      await s.post("/v1/queue/sandbox/image", { prompt: "urls", width: 64, height: 64 })
    ).json()) as Handle;
    expect(plain.status_url).toBe(`${s.url}/v1/requests/${plain.request_id}/status`);
    await get(h);
    await get(plain);
  });

  test("subscribe: status until Completed, then the result", async () => {
    const h = await submit("sandbox/image", { prompt: "a fox", width: 64, height: 64 });
    expect(["Queued", "InProgress", "Completed"]).toContain(await status(h, true));
    const { res, body } = await get(h);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-fal-request-id")).toBe(h.request_id);
    expect((body.images as { content_type: string }[])[0]!.content_type).toBe("image/png");
    // Completed status with logs (with_logs=True) is parsed too.
    expect(await status(h, true)).toBe("Completed");
  });

  test("a failed job: status is Completed, the result read raises at once with the reason", async () => {
    const h = await submit("sandbox/image", { prompt: "boom", sandbox: { fail: true } });
    const { res, text, body } = await get(h);
    // Not retried (neither 408/409/429 nor an ingress 5xx), so `get()` raises FalClientHTTPError.
    expect(res.status).toBe(500);
    expect(res.headers.get("x-fal-request-id")).toBe(h.request_id);
    expect(res.headers.get("x-fal-error-type")).toBe("generation_failed");
    expect(pythonErrorMessage(text)).toContain("fail");
    expect(body.error_type).toBe("generation_failed");
    expect((body.error as { code: string }).code).toBe("generation_failed");
    const st = (await py("GET", `${h.status_url}?logs=false`)).body;
    expect(st.status).toBe("COMPLETED");
    expect(st.error_type).toBe("generation_failed");
  });

  test("cancel of a queued job: 202, then status Completed and the result read raises at once", async () => {
    const slow = await submit("sandbox/image", { prompt: "slow", sandbox: { delay_ms: 1500 } });
    const queued = await submit("sandbox/image", { prompt: "waits" });
    expect(await status(queued)).toBe("Queued");
    const c = await py("PUT", queued.cancel_url);
    expect(c.res.status).toBe(202);
    expect(c.body.status).toBe("CANCELLATION_REQUESTED");
    const { res, text, body } = await get(queued);
    expect(res.status).toBe(400);
    expect(body.error_type).toBe("cancelled");
    expect(pythonErrorMessage(text)).toContain("cancelled");
    // The native route keeps the spec's status.
    const plain = (await (await s.get(`/v1/requests/${queued.request_id}/status`)).json()) as {
      status: string;
    };
    expect(plain.status).toBe("CANCELLED");
    await get(slow);
  });

  test("cancel of a running job: 400 at once (never the 409 the client retries ten times)", async () => {
    const h = await submit("sandbox/image", { prompt: "runs", sandbox: { delay_ms: 1500 } });
    await pollUntil(
      () => status(h),
      (v) => v === "InProgress",
    );
    const c = await py("PUT", h.cancel_url);
    expect(c.res.status).toBe(400);
    expect(c.body.status).toBe("IN_PROGRESS");
    expect(pythonErrorMessage(c.text)).toContain("IN_PROGRESS");
    // It runs to the end and is charged as usual.
    expect((await get(h)).res.status).toBe(200);
    const again = await py("PUT", h.cancel_url);
    expect(again.res.status).toBe(400);
    expect(again.body.status).toBe("ALREADY_COMPLETED");
  });

  test("result read before completion: 400, not a retried 409", async () => {
    const slow = await submit("sandbox/image", { prompt: "slow", sandbox: { delay_ms: 800 } });
    const r = await py("GET", slow.response_url);
    expect(r.res.status).toBe(400);
    expect(r.body.error_type).toBe("request_not_ready");
    await get(slow);
  });

  test("fal_client.status/result/cancel(app, id) build the alias URLs from owner/alias themselves", async () => {
    const h = await submit("sandbox/image", { prompt: "by id", width: 64, height: 64 });
    const base = `${s.url}/v1/queue/sandbox/image/requests/${h.request_id}`;
    expect(await get({ ...h, status_url: `${base}/status`, response_url: base })).toBeTruthy();
    const unknown = await fetch(`${s.url}/v1/queue/sandbox/image/requests/${crypto.randomUUID()}/status`, {
      headers: headers(),
    });
    expect(unknown.status).toBe(404);
  });

  test("/run of a failing model answers 500 (a 502 would make @fal-ai/client submit it again)", async () => {
    const r = await py("POST", `${s.url}/v1/run/sandbox/image`, { prompt: "x", sandbox: { fail: true } });
    expect(r.res.status).toBe(500);
    expect(r.res.headers.get("x-fal-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const plain = await s.post("/v1/run/sandbox/image", { prompt: "x", sandbox: { fail: true } });
    expect(plain.status).toBe(502);
  });
});
