import { encodePng } from "../../../src/providers/sandbox/media/index.ts";

/**
 * A mock of Replicate's predictions API (https://replicate.com/docs/reference/http), faithful to the
 * shapes the gateway reads, with fault injection. Faults come from `input.fault`, or from the model
 * in the URL when its owner is "fault" (POST /v1/models/fault/<fault>/predictions).
 *
 * Create faults: create_429 (Retry-After: 3), create_503, create_500, create_malformed (201, not
 * JSON), create_418 (418 with `marker` as its detail), create_no_id, sync (answers already succeeded). Unknown model owner "missing" -> 404.
 * input.prompt not a string -> 422 like Replicate's input validation. Wrong token -> 401.
 *
 * Poll faults: poll_429 / poll_503 (the first input.busy_polls polls, default 2; Retry-After from
 * input.retry_after),
 * poll_500_once, poll_500, poll_malformed (not JSON), poll_bad_shape (JSON without id), lost (404).
 * Outcomes: failed ("CUDA out of memory", then `marker` when set), canceled, unknown_status, slow (processing forever),
 * echo_token (fails with the token it was sent, in error and logs). Default: starting -> processing
 * -> processing -> succeeded over four polls, logs growing (with a partial line in between).
 * Output: input.mock_output verbatim when given, else one PNG URL.
 * input.cancel_fails = true: the cancel endpoint answers 500.
 *
 * Deadlines, as Replicate's Cancel-After header (replicate.com/changelog/2025-10-16-prediction-
 * deadlines): a create may carry `Cancel-After: <duration>` ("1m", "90s", "1h30m"; a bare number is
 * seconds); a malformed one is a 400. Once the deadline passes, a prediction that has not started
 * becomes `aborted` (never run, not billed) and a running one `canceled`. Faults: queued (stays
 * starting until its deadline), aborted (aborted at the second poll, as if its deadline passed).
 * Outputs as `data:` URLs: fault data_output succeeds with a base64 PNG data URL, as Replicate's
 * client expects file outputs may be (replicate-javascript index.js `run`: "https:" or "data:").
 */
export const TOKEN = "r8_Mock0123456789abcdefSECRETtoken";
export const VERSION = "5c7d5dc6dd8bf75c1acaa8565735e7986bc5b66206b55cca93cb72c9bf15ccaa";

export interface MockCall {
  method: string;
  path: string;
  body: unknown;
  at: number;
}

export interface MockPrediction {
  id: string;
  version: string | null;
  model: string | null;
  input: Record<string, unknown>;
  fault: string;
  status: string;
  polls: number;
  okPolls: number;
  logs: string;
  output: unknown;
  error: unknown;
  canceled: boolean;
  /** The Cancel-After header of the create, as sent, and the deadline it set (epoch ms). */
  cancelAfter: string | null;
  deadline: number | null;
}

export interface MockReplicate {
  /** Base URL, like https://api.replicate.com/v1 */
  url: string;
  /** A test's marker, put in the error texts of faults failed and create_418. */
  marker: string;
  calls: MockCall[];
  predictions: Map<string, MockPrediction>;
  creates(): MockCall[];
  cancels(): string[];
  /** Adds a prediction as if created earlier (for resume tests). */
  seed(input: Record<string, unknown>): string;
  stop(): void;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

const FINAL = ["succeeded", "failed", "canceled", "aborted"];

/** A Go-style duration ("1m", "90s", "1h30m", "1.5s", "250ms") or bare seconds, in ms; undefined when malformed. */
function durationMs(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t) * 1000;
  if (!/^(\d+(\.\d+)?(ms|h|m|s))+$/.test(t)) return undefined;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let total = 0;
  for (const [, n, , u] of t.matchAll(/(\d+(\.\d+)?)(ms|h|m|s)/g)) total += Number(n) * unit[u!]!;
  return total;
}

let seq = 0;
const newId = () =>
  `${Date.now().toString(36)}${(seq++).toString(36)}${Math.random().toString(36).slice(2, 10)}`;

export function startMockReplicate(): MockReplicate {
  const calls: MockCall[] = [];
  const predictions = new Map<string, MockPrediction>();

  const view = (p: MockPrediction, base: string) => ({
    id: p.id,
    model: p.model ?? "acme/versioned",
    version: p.version ?? "hidden",
    input: p.input,
    status: p.status,
    output: p.output,
    error: p.error,
    logs: p.logs,
    metrics: p.status === "succeeded" ? { predict_time: 1.25 } : {},
    created_at: new Date().toISOString(),
    urls: { get: `${base}/predictions/${p.id}`, cancel: `${base}/predictions/${p.id}/cancel` },
  });

  const make = (
    input: Record<string, unknown>,
    version: string | null,
    model: string | null,
    fault: string,
  ) => {
    const p: MockPrediction = {
      id: newId(),
      version,
      model,
      input,
      fault,
      status: "starting",
      polls: 0,
      okPolls: 0,
      logs: "",
      output: null,
      error: null,
      canceled: false,
      cancelAfter: null,
      deadline: null,
    };
    predictions.set(p.id, p);
    return p;
  };

  const advance = (p: MockPrediction, auth: string) => {
    if (p.canceled || FINAL.includes(p.status)) return;
    if (p.deadline !== null && Date.now() >= p.deadline) {
      p.status = p.status === "starting" ? "aborted" : "canceled";
      return;
    }
    p.okPolls++;
    const n = p.okPolls;
    if (p.fault === "slow") {
      p.status = "processing";
      p.logs += `tick ${n}\n`;
      return;
    }
    if (n === 1 || p.fault === "queued") return; // starting
    if (p.fault === "aborted") {
      p.status = "aborted";
      return;
    }
    if (p.fault === "data_output") {
      p.status = "succeeded";
      p.output = [`data:image/png;base64,${Buffer.from(encodePng(16, 8, 3)).toString("base64")}`];
      return;
    }
    if (n >= 2 && p.fault === "failed") {
      p.status = "failed";
      p.logs = "step 1\nTraceback: RuntimeError\n";
      p.error = `CUDA out of memory${mock.marker ? ` ${mock.marker}` : ""}`;
      return;
    }
    if (n >= 2 && p.fault === "canceled") {
      p.status = "canceled";
      return;
    }
    if (n >= 2 && p.fault === "unknown_status") {
      p.status = "exploded";
      return;
    }
    if (n >= 2 && p.fault === "echo_token") {
      p.status = "failed";
      p.logs = `auth header was ${auth}\n`;
      p.error = `token ${auth.replace(/^Bearer /, "")} is over quota`;
      return;
    }
    if (n === 2) {
      p.status = "processing";
      p.logs = "step 1\n";
    } else if (n === 3) {
      p.logs = "step 1\nstep 2\nloading";
    } else {
      p.status = "succeeded";
      p.logs = "step 1\nstep 2\nloading done\nfinished";
      p.output =
        "mock_output" in p.input ? p.input.mock_output : "https://replicate.delivery/pbxt/abc/out-0.png";
    }
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const base = `${url.origin}/v1`;
      const text = req.method === "POST" ? await req.text() : "";
      let body: unknown = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = text;
      }
      calls.push({ method: req.method, path: url.pathname, body, at: performance.now() });
      const auth = req.headers.get("authorization") ?? "";
      if (auth !== `Bearer ${TOKEN}`) {
        return json(401, {
          title: "Unauthenticated",
          detail: `Invalid token ${auth.replace(/^Bearer /, "")}: you did not pass a valid authentication token`,
          status: 401,
        });
      }

      // create
      const modelPath = /^\/v1\/models\/([^/]+)\/([^/]+)\/predictions$/.exec(url.pathname);
      if (req.method === "POST" && (modelPath || url.pathname === "/v1/predictions")) {
        if (!body || typeof body !== "object" || typeof (body as { input?: unknown }).input !== "object") {
          return json(422, { title: "Invalid input", detail: "input is required", status: 422 });
        }
        const b = body as { version?: unknown; input: Record<string, unknown> };
        let version: string | null = null;
        let model: string | null = null;
        let fault = typeof b.input.fault === "string" ? b.input.fault : "";
        if (modelPath) {
          if (modelPath[1] === "missing") return json(404, { detail: "Not found.", status: 404 });
          if (modelPath[1] === "fault") fault = modelPath[2]!;
          model = `${modelPath[1]}/${modelPath[2]}`;
        } else {
          if (typeof b.version !== "string" || !/^[0-9a-f]{64}$/.test(b.version)) {
            return json(422, {
              title: "Invalid version",
              detail:
                "The specified version does not exist (or perhaps you don't have permission to use it?)",
              status: 422,
            });
          }
          version = b.version;
        }
        if ("prompt" in b.input && typeof b.input.prompt !== "string") {
          return json(422, {
            title: "Input validation failed",
            detail: `- input.prompt: Invalid type. Expected: string, given: ${typeof b.input.prompt}`,
            status: 422,
            invalid_fields: [{ type: "type", field: "input.prompt", description: "Invalid type." }],
          });
        }
        if (fault === "create_429") {
          return json(
            429,
            {
              title: "Request was throttled",
              detail: "Request was throttled. Expected available in 3 seconds.",
              status: 429,
            },
            { "retry-after": "3" },
          );
        }
        if (fault === "create_418")
          return json(418, { title: "I'm a teapot", detail: mock.marker, status: 418 });
        if (fault === "create_503") return json(503, { detail: "Service Unavailable", status: 503 });
        if (fault === "create_500") return json(500, { detail: "Internal Server Error", status: 500 });
        if (fault === "create_malformed")
          return new Response("<html>oops</html>", { status: 201, headers: { "content-type": "text/html" } });
        const cancelAfter = req.headers.get("cancel-after");
        const window = cancelAfter === null ? null : durationMs(cancelAfter);
        if (window === undefined) {
          return json(400, {
            title: "Invalid Cancel-After",
            detail: `Invalid duration "${cancelAfter}"`,
            status: 400,
          });
        }
        const p = make(b.input, version, model, fault);
        p.cancelAfter = cancelAfter;
        p.deadline = window === null ? null : Date.now() + window;
        if (fault === "create_no_id") {
          const { id: _id, ...rest } = view(p, base);
          return json(201, rest);
        }
        if (fault === "sync") {
          p.status = "succeeded";
          p.logs = "all at once\n";
          p.output = ["https://replicate.delivery/pbxt/sync/out.webp"];
        }
        return json(201, view(p, base));
      }

      // cancel
      const cancel = /^\/v1\/predictions\/([^/]+)\/cancel$/.exec(url.pathname);
      if (req.method === "POST" && cancel) {
        const p = predictions.get(cancel[1]!);
        if (!p) return json(404, { detail: "Not found.", status: 404 });
        if (p.input.cancel_fails === true) return json(500, { detail: "Internal Server Error", status: 500 });
        p.canceled = true;
        if (!FINAL.includes(p.status)) p.status = "canceled";
        return json(200, view(p, base));
      }

      // get
      const get = /^\/v1\/predictions\/([^/]+)$/.exec(url.pathname);
      if (req.method === "GET" && get) {
        const p = predictions.get(get[1]!);
        if (!p) return json(404, { detail: "Not found.", status: 404 });
        p.polls++;
        const f = p.fault;
        if (f === "lost") return json(404, { detail: "Not found.", status: 404 });
        const busyPolls = typeof p.input.busy_polls === "number" ? p.input.busy_polls : 2;
        if ((f === "poll_429" || f === "poll_503") && p.polls <= busyPolls) {
          const retry = p.input.retry_after;
          return json(
            f === "poll_429" ? 429 : 503,
            { detail: f === "poll_429" ? "Request was throttled." : "Service Unavailable" },
            typeof retry === "string" ? { "retry-after": retry } : {},
          );
        }
        if ((f === "poll_500_once" && p.polls === 1) || f === "poll_500") {
          return json(500, { detail: "Internal Server Error", status: 500 });
        }
        if (f === "poll_malformed") return new Response("{not json", { status: 200 });
        if (f === "poll_bad_shape") return json(200, { hello: "world" });
        advance(p, auth);
        return json(200, view(p, base));
      }
      return json(404, { detail: "Not found.", status: 404 });
    },
  });

  const url = `http://127.0.0.1:${server.port}/v1`;
  const mock: MockReplicate = {
    url,
    marker: "",
    calls,
    predictions,
    creates: () => calls.filter((c) => c.method === "POST" && !c.path.endsWith("/cancel")),
    cancels: () =>
      calls
        .filter((c) => c.method === "POST" && c.path.endsWith("/cancel"))
        .map((c) => c.path.split("/")[3]!),
    seed: (input) => make(input, VERSION, null, typeof input.fault === "string" ? input.fault : "").id,
    stop: () => server.stop(true),
  };
  return mock;
}

/**
 * A server that reads a whole HTTP request and then drops the connection without answering: the
 * create was sent, its outcome is unknown.
 */
export function startDroppingServer(): { url: string; received: string[]; stop(): void } {
  const received: string[] = [];
  const server = Bun.listen<{ buf: string }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(sock) {
        sock.data = { buf: "" };
      },
      data(sock, chunk) {
        sock.data.buf += new TextDecoder().decode(chunk);
        const head = sock.data.buf.indexOf("\r\n\r\n");
        if (head < 0) return;
        const length = Number(/content-length:\s*(\d+)/i.exec(sock.data.buf.slice(0, head))?.[1] ?? 0);
        if (sock.data.buf.length - head - 4 < length) return;
        received.push(sock.data.buf.split("\r\n")[0]!);
        sock.end();
      },
    },
  });
  return { url: `http://127.0.0.1:${server.port}/v1`, received, stop: () => server.stop(true) };
}
